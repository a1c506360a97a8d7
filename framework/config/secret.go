package config

// Secret is a string that never prints: fmt, %v, JSON and YAML all show a mask.
// Read it with Reveal where the value is really needed (the vCenter login).
type Secret string

const secretMask = "<redacted>"

// Reveal returns the value.
func (s Secret) Reveal() string { return string(s) }

// String masks.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return secretMask
}

// GoString masks (%#v).
func (s Secret) GoString() string { return s.String() }

// MarshalJSON masks.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalYAML masks.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// Secrets returns every secret value the config holds, for the redactor. They
// live only in fields of type Secret, so no dump of a Config can show them.
func (c *Config) Secrets() []string {
	var out []string
	if c.VSphere.Password != "" {
		out = append(out, c.VSphere.Password.Reveal())
	}
	return out
}
