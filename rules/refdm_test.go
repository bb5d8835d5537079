package rules

import "testing"

// The reference's example loads, and every key of dm: and digest: has its
// line.
func TestDMDigestReference(t *testing.T) {
	s := mustLoad(t, dmDigestExample)
	if len(s.Rules()) != 1 || len(s.Digests()) != 1 {
		t.Fatalf("example: %d rules, %d digests", len(s.Rules()), len(s.Digests()))
	}
	for _, k := range dmKeys {
		if dmKeyDocs[k] == "" {
			t.Errorf("dm key %s has no doc", k)
		}
	}
	for _, k := range digestKeys {
		if digestKeyDocs[k] == "" {
			t.Errorf("digest key %s has no doc", k)
		}
	}
	if len(dmKeyDocs) != len(dmKeys) || len(digestKeyDocs) != len(digestKeys) {
		t.Error("a doc names a key that does not exist")
	}
}
