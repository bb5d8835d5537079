package firing

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/deskbot/deskbot/rules"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/store"
)

var t0 = time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)

// The store keeps the ledger (store/storetest checks its behaviour on
// both engines).
var _ Ledger = (*store.Store)(nil)

// A refused firing waits a minute, then twice as long each attempt, an
// hour at most; the rate limit and a stop are retried at once.
func TestRetryDelay(t *testing.T) {
	refused := &sdclient.APIError{StatusCode: 403}
	for _, c := range []struct {
		err     error
		attempt int
		want    time.Duration
	}{
		{refused, 1, time.Minute},
		{refused, 2, 2 * time.Minute},
		{refused, 4, 8 * time.Minute},
		{refused, 10, time.Hour},
		{fmt.Errorf("add note: %w", sdclient.ErrRateLimited), 5, 0},
		{sdclient.ErrStopped, 3, 0},
	} {
		if got := RetryDelay(c.err, c.attempt); got != c.want {
			t.Errorf("RetryDelay(%v, %d) = %v, want %v", c.err, c.attempt, got, c.want)
		}
	}
}

// Only an error that proves nothing was sent lets a firing be retried at
// once; a 5xx or a POST that may have been applied does not.
func TestNotSent(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"a 4xx", &sdclient.APIError{StatusCode: 422}, true},
		{"a 429", &sdclient.APIError{StatusCode: 429}, true},
		{"a 5xx", &sdclient.APIError{StatusCode: 502}, false},
		{"refused before sending", fmt.Errorf("note: %w", sdclient.ErrInvalidInput), true},
		{"the chat refused", fmt.Errorf("alert: %w", ErrNotDelivered), true},
		{"a POST that may have been applied", fmt.Errorf("%w: %w", sdclient.ErrNotRetried, &sdclient.APIError{StatusCode: 400}), false},
		{"a network error", errors.New("connection reset"), false},
	} {
		if got := NotSent(c.err); got != c.want {
			t.Errorf("%s: NotSent = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestUpdateHolds(t *testing.T) {
	four, group := 4, int64(7)
	tags := []string{"VIP"}
	ticket := &sdclient.Ticket{ID: 1, Priority: 4, GroupID: &group, Tags: []string{"vip", "mail"},
		CustomFields: map[string]any{"impact": float64(3)}}
	for _, c := range []struct {
		name string
		u    sdclient.TicketUpdate
		want bool
	}{
		{"nothing set", sdclient.TicketUpdate{}, true},
		{"the priority it has", sdclient.TicketUpdate{Priority: &four}, true},
		{"another group", sdclient.TicketUpdate{GroupID: ptr(int64(8))}, false},
		{"a tag it has, in another case", sdclient.TicketUpdate{Tags: &tags}, true},
		{"a tag it lacks", sdclient.TicketUpdate{Tags: &[]string{"urgent"}}, false},
		{"a custom field the desk sends as a JSON number", sdclient.TicketUpdate{CustomFields: map[string]any{"impact": 3}}, true},
		{"a custom field it lacks", sdclient.TicketUpdate{CustomFields: map[string]any{"team": "it"}}, false},
	} {
		if got := UpdateHolds(&c.u, ticket); got != c.want {
			t.Errorf("%s: UpdateHolds = %v, want %v", c.name, got, c.want)
		}
	}
	if got := MergeTags([]string{"vip", "mail"}, []string{"VIP", "urgent"}); fmt.Sprint(got) != "[vip mail urgent]" {
		t.Errorf("MergeTags = %v, want the ticket's tags and urgent", got)
	}
}

func ptr[T any](v T) *T { return &v }

// A resumed firing finds its note by the signed mark alone; on a desk
// that drops markers, by kind, text and time.
func TestConversationThere(t *testing.T) {
	f := rules.Firing{Key: rules.FiringKey{Rule: "r", TicketID: 1}, Episode: 1, Seq: 1, Started: t0}
	note := rules.Action{Kind: rules.ActionNote, Text: "Paged  the on-call\n&amp; noted"}
	marker := Marker(f, 0)
	marks := store.NewMarks([]byte("secret"))
	tag := marks.FiringTag(marker)
	noteConv := func(body string, at time.Time, incoming bool) *sdclient.Conversation {
		return &sdclient.Conversation{Body: body, BodyText: body, Source: sdclient.ConversationSourceNote, CreatedAt: at, Incoming: incoming}
	}
	for _, c := range []struct {
		name  string
		convs []*sdclient.Conversation
		want  bool
	}{
		{"the signed note", []*sdclient.Conversation{noteConv(WithMarker(marks, note.Text, marker), t0, false)}, true},
		{"only the comment, planted by a requester", []*sdclient.Conversation{noteConv("<!-- "+marker+" -->", t0, true)}, false},
		{"a markerless desk: same text since the firing started", []*sdclient.Conversation{noteConv("Paged the on-call & noted", t0.Add(time.Minute), false)}, true},
		{"a markerless desk: same text, written long before", []*sdclient.Conversation{noteConv("Paged the on-call & noted", t0.Add(-time.Hour), false)}, false},
		{"a desk that keeps markers: another firing's note with the same text", []*sdclient.Conversation{
			noteConv(WithMarker(marks, note.Text, Marker(rules.Firing{Key: f.Key, Episode: 2, Seq: 1}, 0)), t0, false),
			noteConv("Paged the on-call & noted", t0.Add(time.Minute), false)}, false},
		{"nothing on the ticket", nil, false},
	} {
		if got := ConversationThere(c.convs, tag, f, note); got != c.want {
			t.Errorf("%s: ConversationThere = %v, want %v", c.name, got, c.want)
		}
	}
}

// fakeSource counts reads and records what the mirror is told.
type fakeSource struct {
	tickets  map[int64]*sdclient.Ticket
	reads    int
	observed []int64
	forgot   []int64
}

func (f *fakeSource) GetTicket(_ context.Context, id int64) (*sdclient.Ticket, error) {
	f.reads++
	t, ok := f.tickets[id]
	if !ok {
		return nil, fmt.Errorf("get ticket %d: %w", id, sdclient.ErrNotFound)
	}
	return t, nil
}
func (f *fakeSource) Observe(t *sdclient.Ticket) { f.observed = append(f.observed, t.ID) }
func (f *fakeSource) Forget(id int64)            { f.forgot = append(f.forgot, id) }

// Each ticket is read once a cycle; a 404 or a deleted ticket is gone
// and leaves the mirror.
func TestRereadsReadOnce(t *testing.T) {
	src := &fakeSource{tickets: map[int64]*sdclient.Ticket{1: {ID: 1}, 2: {ID: 2, Deleted: true}}}
	r := NewRereads()
	for range 2 {
		if tk, err := r.Get(t.Context(), src, 1); err != nil || tk == nil || tk.ID != 1 {
			t.Fatalf("Get(1) = %v, %v", tk, err)
		}
		for _, id := range []int64{2, 3} {
			if tk, err := r.Get(t.Context(), src, id); err != nil || tk != nil {
				t.Fatalf("Get(%d) = %v, %v, want gone", id, tk, err)
			}
		}
	}
	if src.reads != 3 || fmt.Sprint(src.observed) != "[1]" || fmt.Sprint(src.forgot) != "[2 3]" {
		t.Errorf("reads %d, observed %v, forgot %v; want 3 reads, 1 observed, 2 and 3 forgotten", src.reads, src.observed, src.forgot)
	}
	if !r.Has(1) || !r.Has(3) || r.Has(4) {
		t.Error("Has: want 1 and 3 known, 4 not")
	}
}
