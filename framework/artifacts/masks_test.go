package artifacts

import "testing"

func TestMasksStayVisibleAndValidPerFileType(t *testing.T) {
	in := "token <redacted>\n````text\nlog <redacted>\n```\nstill code <redacted>\n````\nafter <redacted>\n"
	want := "token &lt;redacted&gt;\n````text\nlog <redacted>\n```\nstill code <redacted>\n````\nafter &lt;redacted&gt;\n"
	if got := string(encodeMasks("SUMMARY.md", []byte(in))); got != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", got, want)
	}
	if got := string(encodeMasks("junit.xml", []byte(`<failure message="pw <redacted>"/>`))); got != `<failure message="pw &lt;redacted&gt;"/>` {
		t.Errorf("xml: %s", got)
	}
	if got := string(encodeMasks("pod.log", []byte("pw <redacted>"))); got != "pw <redacted>" {
		t.Errorf("log changed: %s", got)
	}
}
