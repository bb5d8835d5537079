package storetest

import (
	"testing"

	"github.com/deskbot/deskbot/store"
)

// testConcurrentMarks: replicas starting at once over one store make one
// installation secret between them, so all sign deskbot's marks alike.
func testConcurrentMarks(t *testing.T, open Open) {
	ss := replicas(t, open, 8)
	marks := make([]*store.Marks, len(ss))
	errs := make([]error, len(ss))
	race(len(ss), func(i int) { marks[i], errs[i] = ss[i].Marks(t.Context()) })
	const marker = "deskbot:f=rule/1/1.1/0"
	for i, m := range marks {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if m.FiringTag(marker) != marks[0].FiringTag(marker) {
			t.Fatalf("replica %d signs otherwise than replica 0", i)
		}
	}
	if marks[0].FiringTag(marker) == store.NewMarks(nil).FiringTag(marker) {
		t.Fatal("the installation signs with the default key")
	}
}
