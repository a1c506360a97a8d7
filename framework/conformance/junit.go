package conformance

import (
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"time"
)

// The shape Ginkgo v2 (and so e2e.test) writes: only what the report reads.
type junitSuites struct {
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Status  string        `xml:"status,attr"`
	Time    float64       `xml:"time,attr"`
	Skipped *junitMessage `xml:"skipped"`
	Failure *junitMessage `xml:"failure"`
	Error   *junitMessage `xml:"error"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// parseJUnit reads one JUnit file into tests. Ginkgo puts every spec of the
// suite in the report, the ones its focus and skip filtered out included (as
// skipped, without a message): that is what lets the report list every
// conformance test, run or not.
func parseJUnit(path string) ([]Test, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s junitSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		// A lone <testsuite> root is JUnit too.
		var one junitSuite
		if err2 := xml.Unmarshal(data, &one); err2 != nil || len(one.Cases) == 0 {
			return nil, fmt.Errorf("%s is not a JUnit report: %w", path, err)
		}
		s.Suites = []junitSuite{one}
	}
	var out []Test
	for _, suite := range s.Suites {
		for _, c := range suite.Cases {
			out = append(out, testOf(c))
		}
	}
	return out, nil
}

func testOf(c junitCase) Test {
	t := Test{Name: specName(c.Name), Duration: time.Duration(c.Time * float64(time.Second))}
	switch {
	case c.Failure != nil || c.Error != nil || c.Status == "failed" || c.Status == "panicked" || c.Status == "timedout" || c.Status == "interrupted" || c.Status == "aborted":
		t.Status = Failed
		m := c.Failure
		if m == nil {
			m = c.Error
		}
		if m != nil {
			t.Message = strings.TrimSpace(strings.Join([]string{m.Message, m.Text}, "\n"))
		}
		if t.Message == "" {
			t.Message = c.Status
		}
	case c.Skipped != nil || c.Status == "skipped" || c.Status == "pending":
		t.Status = Skipped
		if c.Skipped != nil {
			t.Message = strings.TrimSpace(c.Skipped.Message)
		}
	default:
		t.Status = Passed
	}
	return t
}

// specName drops Ginkgo's leaf-node prefix ("[It] ") so names read as the
// conformance list spells them.
func specName(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range []string{"[It] ", "[BeforeSuite] ", "[AfterSuite] ", "[SynchronizedBeforeSuite] ", "[SynchronizedAfterSuite] ", "[ReportAfterSuite] ", "[DeferCleanup (Suite)] "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
