package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/deskbot/deskbot/sdclient"
)

// How a full sync reads the open tickets.
const (
	// readBySearch pages GET /tickets/filter over the open statuses.
	readBySearch = "search"
	// readByList walks GET /tickets?updated_since= (every ticket, 100 a
	// page, oldest change first, keyset-paged like the feed) and keeps
	// the open ones: no desk caps its depth.
	readByList = "list"
)

// listEpoch is where the full sync's walk of the ticket list starts:
// before any desk's first ticket (without updated_since the list shows
// only the last 30 days).
var listEpoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// allTicketsQuery counts, in one filter request, the tickets of every
// status the ticket list would walk (the filter needs some term; every
// ticket was created after 1970).
const allTicketsQuery = "created_at:>'1970-01-01'"

// turnToList ends a full sync's search: the rest is read another way.
type turnToList struct {
	why string
	cap *capped // the desk's page cap, when that is why
}

func (t *turnToList) Error() string { return "read the ticket list instead: " + t.why }

// turn records that fs reads by, from now on, and why.
func (fs *fullSyncRun) turn(by, why string) {
	fs.readBy, fs.why = by, why
	how := map[string]string{readByList: "by the ticket list", readByWindows: "by created_at windows of the search"}[by]
	fs.log.Info("full sync reads "+how+" instead of paging the search", slog.String("why", why))
	if fs.prog != nil {
		fs.prog.how = how + " (" + why + ")"
	}
}

// fullSyncPastCap reads what the search did not reach (turn says why) for
// queries, the one that stopped first: by created_at windows when the
// desk capped the pages and the windows cost less than the list, else (or
// when a day is too full for a window) by the list.
func (f *Feed) fullSyncPastCap(ctx context.Context, m *wsMirror, queries []string, fs *fullSyncRun, turn *turnToList) error {
	if turn.cap != nil {
		if ok, how := f.windowsCheaper(ctx, m, fs, *turn.cap); ok {
			fs.turn(readByWindows, turn.why+"; "+how)
			err := error(nil)
			for _, q := range queries {
				if err = f.fullSyncWindows(ctx, m, q, fs, turn.cap.pages*turn.cap.pageSize); err != nil {
					break
				}
			}
			if !errors.Is(err, errWindowTooFull) {
				return err
			}
			turn = &turnToList{why: turn.why + "; " + err.Error()}
		}
	}
	fs.turn(readByList, turn.why)
	return f.fullSyncByList(ctx, m, fs)
}

// pageRefused reports whether err is the desk refusing a search page as
// too deep: a 400 about the page parameter ("You cannot access tickets
// beyond the 10th page", "page should not exceed 40").
func pageRefused(err error) bool {
	var ae *sdclient.APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
		return false
	}
	for _, fe := range ae.Errors {
		if fe.Field == "page" || strings.Contains(strings.ToLower(fe.Message), "page") {
			return true
		}
	}
	return strings.Contains(strings.ToLower(ae.Description), "page")
}

// listIsCheaper decides, after the first page of a search that leaves
// rest tickets unread in pages of pageSize, whether walking the whole
// ticket list (100 a page, every status) costs fewer requests, and if so
// says why. The desk's search pages hold 30 tickets whatever per_page
// asks (see sdclient/decisions.md), a third of a list page: on a desk
// whose open tickets are a good share of all, the list is cheaper. It
// spends one request counting the tickets, only when the search has more
// than a few pages left.
func (f *Feed) listIsCheaper(ctx context.Context, m *wsMirror, fs *fullSyncRun, rest, pageSize int) string {
	if pageSize <= 0 || pageSize >= feedPageSize || rest <= 0 {
		return ""
	}
	searchPages := (rest + pageSize - 1) / pageSize
	if searchPages <= 10 {
		return ""
	}
	if fs.all < 0 {
		p, resp, err := f.desk.FilterTickets(ctx, allTicketsQuery, &sdclient.FilterOptions{WorkspaceID: m.param})
		fs.requests += Attempts(resp, err)
		if err != nil {
			// Not knowing, the search goes on: it is what always worked.
			fs.log.Warn("full sync could not count the desk's tickets; paging the search", slog.Any("error", err))
			fs.all = 0
			return ""
		}
		fs.all = p.Total
	}
	listPages := fs.all/feedPageSize + 1
	if fs.all == 0 || listPages >= searchPages {
		return ""
	}
	return fmt.Sprintf("%d open tickets left at %d a search page take %d requests; the list of all %d tickets takes %d",
		rest, pageSize, searchPages, fs.all, listPages)
}

// fullSyncByList reads every ticket of m's workspace from the ticket list,
// updated since listEpoch, oldest change first, a page of 100 at a time
// until a short page, and mirrors the open ones (and the news of mirrored
// ones that closed). After each full page it asks again from the page's
// newest updated_at, as the feed does; a desk that ignores the order is
// paged by number to the end. Only reaching the end makes the sync whole.
func (f *Feed) fullSyncByList(ctx context.Context, m *wsMirror, fs *fullSyncRun) error {
	since, page, ordered := listEpoch, 1, true
	have := map[int64]time.Time{} // what the walk returned: keyset re-reads are not news
	for n := 1; ; n++ {
		opts := &sdclient.TicketListOptions{UpdatedSince: &since, OrderBy: "updated_at", OrderType: "asc",
			WorkspaceID: m.param, ListOptions: sdclient.ListOptions{Page: page, PerPage: feedPageSize}}
		list, resp, err := f.desk.ListTickets(ctx, opts)
		fs.requests += Attempts(resp, err)
		if err != nil {
			return fmt.Errorf("full sync of the %s by the ticket list, after %d tickets: %w", m.name(), len(fs.seen), err)
		}
		if fs.deskStart.IsZero() {
			fs.deskStart = deskDate(resp)
		}
		for i, t := range list {
			if i > 0 && t != nil && list[i-1] != nil && t.UpdatedAt.Before(list[i-1].UpdatedAt) {
				ordered = false
			}
		}
		if err := f.fullSyncListPage(ctx, m, list, fs, have); err != nil {
			return err
		}
		f.m.fullSyncProgress.WithLabelValues(m.name()).Set(float64(len(fs.seen)))
		if n%50 == 0 {
			fs.log.Info("full sync of the mirror under way", slog.String("read_by", readByList),
				slog.Int("open_seen", len(fs.seen)), slog.Int("walked", len(have)))
		}
		if len(list) < feedPageSize {
			return nil
		}
		if last := list[len(list)-1]; ordered && last != nil && last.UpdatedAt.After(since) {
			since, page = last.UpdatedAt, 1
		} else {
			page++
		}
	}
}

// fullSyncListPage mirrors one page of the ticket list's walk: open
// tickets are put and seen, closed ones only refresh a mirrored copy
// (closed tickets of years are not the mirror's business).
func (f *Feed) fullSyncListPage(ctx context.Context, m *wsMirror, list []*sdclient.Ticket, fs *fullSyncRun, have map[int64]time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f.startFeedCursor(m, fs)
	for _, t := range list {
		if t == nil {
			continue
		}
		if at, ok := have[t.ID]; ok && !t.UpdatedAt.After(at) {
			continue
		}
		have[t.ID] = t.UpdatedAt
		fs.newest = maxTime(fs.newest, t.UpdatedAt)
		if !sdclient.IsOpenStatus(t.Status) || t.Deleted || t.Spam {
			if _, ok := m.tickets[t.ID]; ok {
				m.put(t)
			}
			delete(fs.seen, t.ID)
			continue
		}
		fs.seen[t.ID] = true
		m.put(t)
	}
	fs.prog.seen = len(fs.seen)
	fs.prog.total = max(fs.prog.total, len(fs.seen))
	return m.persist(ctx, f.ms)
}
