#!/usr/bin/env python3
"""Look for every rendering of a secret in a run's output, from outside the
harness (its own closing scan shares code with its redactor; this does not).

  check-secret-forms.py ENV_VAR PATH...

Reads the secret from the environment variable ENV_VAR, computes its raw,
URL-escaped (query and path), JSON-escaped (once and twice), YAML
single- and double-quoted, XML-escaped and base64 forms (all three
alignments), then searches every file under each PATH (and base64-decoded
runs inside them). Exit 1 with the file and form of each hit, 0 when none.
"""
import base64, html, json, os, re, sys, urllib.parse

def forms(s):
    out = {"raw": s}
    out["url-query"] = urllib.parse.quote_plus(s)
    out["url-path"] = urllib.parse.quote(s, safe="")
    out["json"] = json.dumps(s)[1:-1]
    out["json-twice"] = json.dumps(json.dumps(s)[1:-1])[1:-1]
    out["yaml-single"] = s.replace("'", "''")
    out["xml"] = html.escape(s, quote=True)
    out["xml-noquote"] = html.escape(s, quote=False)
    b = s.encode()
    for pad in range(3):
        enc = base64.b64encode(b"\0" * pad + b).decode()
        # The part of the encoding that depends only on the secret's bytes.
        start = (pad * 4 + 2) // 3 + (1 if pad else 0)
        core = enc[start:len(enc) - 4] if len(enc) - start > 8 else ""
        if len(core) >= 6:
            out["base64+%d" % pad] = core
    return {k: v for k, v in out.items() if v}

def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    secret = os.environ.get(sys.argv[1], "")
    if len(secret) < 4:
        print("check-secret-forms: $%s is empty or too short to search for" % sys.argv[1], file=sys.stderr)
        return 2
    fs = forms(secret)
    b64run = re.compile(rb"[A-Za-z0-9+/]{16,}={0,2}")
    hits, files = [], 0
    for root in sys.argv[2:]:
        paths = [root] if os.path.isfile(root) else [os.path.join(d, f) for d, _, fl in os.walk(root) for f in fl]
        for p in paths:
            if os.path.islink(p):
                continue
            try:
                data = open(p, "rb").read()
            except OSError as e:
                print("check-secret-forms: cannot read %s: %s" % (p, e), file=sys.stderr)
                return 1
            files += 1
            texts = [data]
            for m in b64run.finditer(data):
                chunk = m.group(0)
                try:
                    texts.append(base64.b64decode(chunk + b"=" * (-len(chunk) % 4)))
                except Exception:
                    pass
            for name, f in fs.items():
                needle = f.encode()
                if any(needle in t for t in texts):
                    hits.append("%s: %s form" % (p, name))
    for h in hits:
        print("SECRET FOUND " + h)
    print("check-secret-forms: %d file(s), %d form(s) of $%s, %d hit(s)" % (files, len(fs), sys.argv[1], len(hits)))
    return 1 if hits else 0

if __name__ == "__main__":
    sys.exit(main())
