package kind

import (
	"strings"
	"testing"
)

func TestCreateRejectsDigestsAndMissingState(t *testing.T) {
	_, err := Create(t.Context(), CreateInput{Name: "h4e-boot",
		NodeImage: "kindest/node:v1.33.1@sha256:0123", KubeconfigPath: "/tmp/x"})
	for _, want := range []string{"digest reference; pass it by tag", "State is nil", "Timeout", "NodesReady must be > 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}
