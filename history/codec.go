package history

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// Trim returns a copy of t with the rule-relevant fields only (see Record): no description, conversations,
// e-mail addresses, attachments or embeds. Nil stays nil.
func Trim(t *sdclient.Ticket) *sdclient.Ticket {
	if t == nil {
		return nil
	}
	return &sdclient.Ticket{
		ID: t.ID, WorkspaceID: t.WorkspaceID, Subject: t.Subject, Status: t.Status, Priority: t.Priority,
		Source: t.Source, Urgency: t.Urgency, Impact: t.Impact, Type: t.Type, RequesterID: t.RequesterID,
		ResponderID: t.ResponderID, GroupID: t.GroupID, DepartmentID: t.DepartmentID, Category: t.Category,
		SubCategory: t.SubCategory, ItemCategory: t.ItemCategory, DueBy: t.DueBy, FrDueBy: t.FrDueBy,
		IsEscalated: t.IsEscalated, FrEscalated: t.FrEscalated, Tags: t.Tags, CustomFields: t.CustomFields,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
}

// wire is a trimmed ticket as stored: short keys, empty fields left out, times in Unix seconds (the desk's
// times have whole seconds). Measured on sdsim's tickets it is about a third of sdclient.Ticket's own JSON
// (BenchmarkHistoryWrite in history/recorder).
type wire struct {
	ID   int64          `json:"i"`
	WS   *int64         `json:"w,omitempty"`
	Subj string         `json:"s,omitempty"`
	St   int            `json:"st,omitempty"`
	Pr   int            `json:"p,omitempty"`
	Src  int            `json:"so,omitempty"`
	Urg  *int           `json:"u,omitempty"`
	Imp  *int           `json:"im,omitempty"`
	Typ  string         `json:"t,omitempty"`
	Req  int64          `json:"r,omitempty"`
	Agt  *int64         `json:"a,omitempty"`
	Grp  *int64         `json:"g,omitempty"`
	Dep  *int64         `json:"d,omitempty"`
	Cat  *string        `json:"c,omitempty"`
	Sub  *string        `json:"sc,omitempty"`
	Item *string        `json:"ic,omitempty"`
	Due  *int64         `json:"db,omitempty"`
	FrD  *int64         `json:"fd,omitempty"`
	Esc  bool           `json:"e,omitempty"`
	FrE  bool           `json:"fe,omitempty"`
	Tags []string       `json:"tg,omitempty"`
	CF   map[string]any `json:"cf,omitempty"`
	Cr   int64          `json:"ca,omitempty"`
	Up   int64          `json:"ua,omitempty"`
}

// Marshal encodes the rule-relevant fields of t (see Trim) compactly.
func Marshal(t *sdclient.Ticket) ([]byte, error) {
	if t == nil {
		return nil, fmt.Errorf("encode a nil ticket")
	}
	w := wire{ID: t.ID, WS: t.WorkspaceID, Subj: t.Subject, St: t.Status, Pr: t.Priority, Src: t.Source,
		Urg: t.Urgency, Imp: t.Impact, Typ: t.Type, Req: t.RequesterID, Agt: t.ResponderID, Grp: t.GroupID,
		Dep: t.DepartmentID, Cat: t.Category, Sub: t.SubCategory, Item: t.ItemCategory, Due: unixPtr(t.DueBy),
		FrD: unixPtr(t.FrDueBy), Esc: t.IsEscalated, FrE: t.FrEscalated, Tags: t.Tags, CF: t.CustomFields,
		Cr: unix(t.CreatedAt), Up: unix(t.UpdatedAt)}
	b, err := json.Marshal(&w)
	if err != nil {
		return nil, fmt.Errorf("encode ticket %d: %w", t.ID, err)
	}
	return b, nil
}

// Unmarshal decodes what Marshal encoded: a trimmed ticket, times in UTC.
func Unmarshal(b []byte) (*sdclient.Ticket, error) {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decode a recorded ticket: %w", err)
	}
	return &sdclient.Ticket{ID: w.ID, WorkspaceID: w.WS, Subject: w.Subj, Status: w.St, Priority: w.Pr,
		Source: w.Src, Urgency: w.Urg, Impact: w.Imp, Type: w.Typ, RequesterID: w.Req, ResponderID: w.Agt,
		GroupID: w.Grp, DepartmentID: w.Dep, Category: w.Cat, SubCategory: w.Sub, ItemCategory: w.Item,
		DueBy: timePtr(w.Due), FrDueBy: timePtr(w.FrD), IsEscalated: w.Esc, FrEscalated: w.FrE, Tags: w.Tags,
		CustomFields: w.CF, CreatedAt: fromUnix(w.Cr), UpdatedAt: fromUnix(w.Up)}, nil
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func unixPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	u := t.Unix()
	return &u
}

func fromUnix(u int64) time.Time {
	if u == 0 {
		return time.Time{}
	}
	return time.Unix(u, 0).UTC()
}

func timePtr(u *int64) *time.Time {
	if u == nil {
		return nil
	}
	t := time.Unix(*u, 0).UTC()
	return &t
}
