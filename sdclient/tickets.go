package sdclient

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient/filter"
)

// TicketsService handles tickets: /tickets, /tickets/{id}, /tickets/filter.
type TicketsService service

// TicketCreate is the body of POST /tickets. The desk needs the requester:
// set Email or RequesterID (checked before sending). Zero values are not
// sent.
type TicketCreate struct {
	Subject        string         `json:"subject,omitempty"`
	Description    string         `json:"description,omitempty"`
	Email          string         `json:"email,omitempty"`
	RequesterID    int64          `json:"requester_id,omitempty"`
	Name           string         `json:"name,omitempty"`
	Phone          string         `json:"phone,omitempty"`
	RequestedForID int64          `json:"requested_for_id,omitempty"`
	Status         int            `json:"status,omitempty"`
	Priority       int            `json:"priority,omitempty"`
	Source         int            `json:"source,omitempty"`
	Urgency        int            `json:"urgency,omitempty"`
	Impact         int            `json:"impact,omitempty"`
	Type           string         `json:"type,omitempty"`
	GroupID        int64          `json:"group_id,omitempty"`
	ResponderID    int64          `json:"responder_id,omitempty"`
	DepartmentID   int64          `json:"department_id,omitempty"`
	Category       string         `json:"category,omitempty"`
	SubCategory    string         `json:"sub_category,omitempty"`
	ItemCategory   string         `json:"item_category,omitempty"`
	DueBy          *time.Time     `json:"due_by,omitempty"`
	FrDueBy        *time.Time     `json:"fr_due_by,omitempty"`
	Tags           []string       `json:"tags,omitempty"`
	CCEmails       []string       `json:"cc_emails,omitempty"`
	WorkspaceID    int64          `json:"workspace_id,omitempty"`
	CustomFields   map[string]any `json:"custom_fields,omitempty"`
}

func (t *TicketCreate) validate(op string) error {
	if t == nil {
		return invalid(op, "ticket is nil")
	}
	if t.Email == "" && t.RequesterID == 0 {
		return invalid(op, "the desk needs the requester: set email or requester_id")
	}
	if t.RequesterID < 0 {
		return invalid(op, "requester_id must be positive, got %d", t.RequesterID)
	}
	if t.Email != "" {
		if _, err := mail.ParseAddress(t.Email); err != nil {
			return invalid(op, "email %q is not an e-mail address", t.Email)
		}
	}
	return nil
}

// Create creates a ticket (POST /tickets, 201).
func (s *TicketsService) Create(ctx context.Context, t *TicketCreate) (*Ticket, *Response, error) {
	const op = "create ticket"
	if err := t.validate(op); err != nil {
		return nil, nil, err
	}
	return sendOne[Ticket](ctx, s.client, request{op: op, method: http.MethodPost, path: "tickets", body: t}, "ticket")
}

// ticketGetIncludes are the embeds GET /tickets/{id} accepts.
var ticketGetIncludes = []string{"assets", "conversations", "requester", "requested_for", "stats", "problem", "tags", "related_tickets", "changes", "onboarding_context", "offboarding_context"}

// Get reads one ticket (GET /tickets/{id}); include names embeds such as
// "conversations", "requester", "stats", "assets" (each costs rate credits).
func (s *TicketsService) Get(ctx context.Context, id int64, include ...string) (*Ticket, *Response, error) {
	op := fmt.Sprintf("get ticket %d", id)
	if id <= 0 {
		return nil, nil, invalid(op, "ticket id must be positive")
	}
	for _, inc := range include {
		if !slices.Contains(ticketGetIncludes, inc) {
			return nil, nil, invalid(op, "include %q is not one of %s", inc, strings.Join(ticketGetIncludes, ", "))
		}
	}
	q := ""
	if len(include) > 0 {
		q = "include=" + escapeQuery(strings.Join(include, ","))
	}
	return getOne[Ticket](ctx, s.client, op, idPath("tickets", id), q, "ticket")
}

// TicketListOptions are the query parameters of GET /tickets.
type TicketListOptions struct {
	// Filter is a preset: new_and_my_open, watching, spam or deleted.
	Filter string `url:"filter,omitempty"`
	// UpdatedSince lists tickets updated at or after it; without it the desk
	// lists only tickets created in the last 30 days.
	UpdatedSince *time.Time `url:"updated_since,omitempty"`
	OrderBy      string     `url:"order_by,omitempty"`
	// OrderType is asc or desc (the desk's default).
	OrderType   string `url:"order_type,omitempty"`
	RequesterID int64  `url:"requester_id,omitempty"`
	Email       string `url:"email,omitempty"`
	// Include embeds: stats, requester, requested_for (cost extra credits).
	Include     []string `url:"include,omitempty"`
	WorkspaceID *int64   `url:"workspace_id,omitempty"`
	ListOptions
}

var (
	ticketListFilters  = []string{"new_and_my_open", "watching", "spam", "deleted"}
	ticketListIncludes = []string{"stats", "requester", "requested_for", "conversations", "onboarding_context", "offboarding_context"}
)

func (o *TicketListOptions) validate(op string) error {
	if o == nil {
		return nil
	}
	if o.Filter != "" && !slices.Contains(ticketListFilters, o.Filter) {
		return invalid(op, "filter %q is not one of %s", o.Filter, strings.Join(ticketListFilters, ", "))
	}
	if o.OrderType != "" && o.OrderType != "asc" && o.OrderType != "desc" {
		return invalid(op, "order_type must be asc or desc, got %q", o.OrderType)
	}
	for _, inc := range o.Include {
		if !slices.Contains(ticketListIncludes, inc) {
			return invalid(op, "include %q is not one of %s", inc, strings.Join(ticketListIncludes, ", "))
		}
	}
	return nil
}

// List reads one page of tickets (GET /tickets).
func (s *TicketsService) List(ctx context.Context, opts *TicketListOptions) ([]*Ticket, *Response, error) {
	const op = "list tickets"
	if err := opts.validate(op); err != nil {
		return nil, nil, err
	}
	return list[Ticket](ctx, s.client, op, "tickets", "tickets", opts)
}

// ListAll walks every page of GET /tickets (100 per page unless set),
// following the Link header.
func (s *TicketsService) ListAll(ctx context.Context, opts *TicketListOptions) iter.Seq2[*Ticket, error] {
	return listAll(ctx, opts, s.List)
}

// Update changes the fields set in u (PUT /tickets/{id}); see TicketUpdate.
func (s *TicketsService) Update(ctx context.Context, id int64, u *TicketUpdate) (*Ticket, *Response, error) {
	op := fmt.Sprintf("update ticket %d", id)
	if id <= 0 {
		return nil, nil, invalid(op, "ticket id must be positive")
	}
	if u == nil || u.empty() {
		return nil, nil, invalid(op, "no field to update")
	}
	return sendOne[Ticket](ctx, s.client, request{op: op, method: http.MethodPut, path: idPath("tickets", id), body: u}, "ticket")
}

// Delete soft-deletes a ticket (DELETE /tickets/{id}, 204); Restore undoes it.
func (s *TicketsService) Delete(ctx context.Context, id int64) (*Response, error) {
	return deleteByID(ctx, s.client, "ticket", "tickets", id)
}

// Restore brings back a deleted ticket (PUT /tickets/{id}/restore, 204).
func (s *TicketsService) Restore(ctx context.Context, id int64) (*Response, error) {
	op := fmt.Sprintf("restore ticket %d", id)
	if id <= 0 {
		return nil, invalid(op, "ticket id must be positive")
	}
	return s.client.do(ctx, request{op: op, method: http.MethodPut, path: idPath("tickets", id) + "/restore"}, nil)
}

// FilterOptions are the parameters of a filter search.
type FilterOptions struct {
	// WorkspaceID selects the one workspace to search; nil searches the
	// account's default workspace. The description allows one workspace per
	// request (the real API also reads 0 as "all", global fields only; the
	// simulator refuses it), so poll several workspaces with one search each.
	WorkspaceID *int64
	// Page is the page to read (Filter) or to start from (FilterAll).
	Page int
	// MaxPages caps how many pages FilterAll reads; 0 means no cap. When the
	// cap cuts a result short FilterAll ends with an error wrapping
	// ErrTruncated.
	MaxPages int
}

// FilterPage is one page of GET /tickets/filter.
type FilterPage struct {
	Tickets []*Ticket `json:"tickets"`
	// Total is how many tickets match, over all pages.
	Total int `json:"total"`
}

// filterQuery validates query with the filter package and returns the
// encoded query= parameter: the expression in double quotes, %20 for
// spaces.
func filterQuery(op, query string) (string, error) {
	expr, err := filter.Parse(query)
	if err != nil {
		return "", fmt.Errorf("sdclient: %s: query: %w: %w", op, err, ErrInvalidInput)
	}
	enc, err := filter.Encode(expr)
	if err != nil {
		return "", fmt.Errorf("sdclient: %s: query: %w: %w", op, err, ErrInvalidInput)
	}
	// Belt and braces: the text between the quotes must fit the desk's limit.
	if plain, err := url.PathUnescape(enc); err == nil && len(strings.Trim(plain, `"`)) > filter.MaxLen {
		return "", invalid(op, "query is %d characters long; the desk accepts at most %d", len(strings.Trim(plain, `"`)), filter.MaxLen)
	}
	return "query=" + enc, nil
}

func (o *FilterOptions) query() string {
	if o == nil {
		return ""
	}
	var parts []string
	if o.Page > 0 {
		parts = append(parts, "page="+strconv.Itoa(o.Page))
	}
	if o.WorkspaceID != nil {
		parts = append(parts, "workspace_id="+strconv.FormatInt(*o.WorkspaceID, 10))
	}
	return strings.Join(parts, "&")
}

func (o *FilterOptions) validate(op string) error {
	if o == nil {
		return nil
	}
	if o.Page < 0 {
		return invalid(op, "page must be 1 or more, got %d", o.Page)
	}
	if o.MaxPages < 0 {
		return invalid(op, "max pages must be 0 (no cap) or more, got %d", o.MaxPages)
	}
	return nil
}

// Filter reads one page of tickets matching a filter expression
// (GET /tickets/filter?query="..."). The query is parsed and length-checked
// before anything is sent.
func (s *TicketsService) Filter(ctx context.Context, query string, opts *FilterOptions) (*FilterPage, *Response, error) {
	return filterPage[FilterPage](ctx, s.client, "filter tickets", "tickets/filter", query, opts)
}

// filterPage reads one page of a filter endpoint into a *P ({"<plural>",
// "total"}), checking the options and the query before anything is sent.
func filterPage[P any](ctx context.Context, c *Client, op, path, query string, opts *FilterOptions) (*P, *Response, error) {
	if err := opts.validate(op); err != nil {
		return nil, nil, err
	}
	q, err := filterQuery(op, query)
	if err != nil {
		return nil, nil, err
	}
	page := new(P)
	resp, err := c.do(ctx, request{op: op, method: http.MethodGet, path: path, query: joinQuery(q, opts.query())}, page)
	if err != nil {
		return nil, resp, err
	}
	return page, resp, nil
}

// FilterAll walks the pages of a filter search until Total tickets were
// seen or a short or empty page arrives (it never assumes a page size), and
// skips tickets repeated across pages. With MaxPages set it stops there; if
// that leaves tickets unread its last element is an error wrapping
// ErrTruncated, so the caller knows the result is incomplete.
func (s *TicketsService) FilterAll(ctx context.Context, query string, opts *FilterOptions) iter.Seq2[*Ticket, error] {
	return walkFilter(opts, "filter tickets", func(o *FilterOptions) ([]*Ticket, int, error) {
		p, _, err := s.Filter(ctx, query, o)
		if err != nil {
			return nil, 0, err
		}
		return p.Tickets, p.Total, nil
	}, func(t *Ticket) int64 { return t.ID })
}

// walkFilter pages a total-carrying search on a copy of opts; fetch reads
// the page the copy names.
func walkFilter[T any](opts *FilterOptions, op string, fetch func(*FilterOptions) ([]*T, int, error), id func(*T) int64) iter.Seq2[*T, error] {
	var base FilterOptions
	if opts != nil {
		base = *opts
	}
	return func(yield func(*T, error) bool) {
		o := base // a fresh copy per range: ranging again starts over
		if o.Page < 1 {
			o.Page = 1
		}
		seen := map[int64]bool{}
		pageSize, pages := 0, 0
		for {
			items, total, err := fetch(&o)
			if err != nil {
				yield(nil, err)
				return
			}
			pages++
			for _, it := range items {
				if k := id(it); !seen[k] {
					seen[k] = true
					if !yield(it, nil) {
						return
					}
				}
			}
			pageSize = max(pageSize, len(items))
			if len(items) == 0 || len(items) < pageSize || len(seen) >= total {
				return
			}
			if o.MaxPages > 0 && pages >= o.MaxPages {
				yield(nil, fmt.Errorf("sdclient: %s: stopped after %d pages with %d of %d results: %w", op, pages, len(seen), total, ErrTruncated))
				return
			}
			o.Page++
		}
	}
}
