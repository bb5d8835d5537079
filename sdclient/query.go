package sdclient

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// escapeQuery escapes a query value with %20 for spaces (never '+', which
// the desk does not read as a space) and keeps commas of lists readable.
func escapeQuery(s string) string {
	s = url.QueryEscape(s)
	s = strings.ReplaceAll(s, "+", "%20")
	return strings.ReplaceAll(s, "%2C", ",")
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	listOptionsType = reflect.TypeFor[ListOptions]()
)

// encodeQuery turns an options struct (pointer or value, nil allowed) with
// `url:"name,omitempty"` tags into an encoded query string with keys in
// sorted order. Embedded ListOptions are validated.
func encodeQuery(opts any) (string, error) {
	if opts == nil {
		return "", nil
	}
	v := reflect.ValueOf(opts)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", nil
		}
		v = v.Elem()
	}
	var pairs [][2]string
	if err := collectQuery(v, &pairs); err != nil {
		return "", err
	}
	slices.SortStableFunc(pairs, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = escapeQuery(p[0]) + "=" + escapeQuery(p[1])
	}
	return strings.Join(parts, "&"), nil
}

func collectQuery(v reflect.Value, pairs *[][2]string) error {
	if v.Type() == listOptionsType {
		if err := v.Interface().(ListOptions).validate(); err != nil {
			return err
		}
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		fv := v.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := collectQuery(fv, pairs); err != nil {
				return err
			}
			continue
		}
		tag := f.Tag.Get("url")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		name, rest, _ := strings.Cut(tag, ",")
		omitEmpty := rest == "omitempty"
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
			omitEmpty = false // a set pointer is always sent, even to zero
		}
		if omitEmpty && fv.IsZero() {
			continue
		}
		s, err := formatQueryValue(fv)
		if err != nil {
			return fmt.Errorf("query parameter %s: %w", name, err)
		}
		*pairs = append(*pairs, [2]string{name, s})
	}
	return nil
}

func formatQueryValue(v reflect.Value) (string, error) {
	if v.Type() == timeType {
		return v.Interface().(time.Time).UTC().Format(time.RFC3339), nil
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range v.Len() {
			s, err := formatQueryValue(v.Index(i))
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("unsupported type %s", v.Type())
}

// joinQuery joins encoded query parts, skipping empty ones.
func joinQuery(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "&")
}

// envelope decodes the desk's wrapped bodies ({"ticket": {...}}).
type envelope map[string]json.RawMessage

func (e envelope) get(key string, out any) error {
	raw, ok := e[key]
	if !ok {
		return fmt.Errorf("response has no %q", key)
	}
	return json.Unmarshal(raw, out)
}

// getOne fetches a single object wrapped in key.
func getOne[T any](ctx context.Context, c *Client, op, path, query, key string) (*T, *Response, error) {
	return sendOne[T](ctx, c, request{op: op, method: http.MethodGet, path: path, query: query}, key)
}

// sendOne performs r and decodes the object wrapped in key (any of keys,
// for resources whose envelope varies).
func sendOne[T any](ctx context.Context, c *Client, r request, keys ...string) (*T, *Response, error) {
	var env envelope
	resp, err := c.do(ctx, r, &env)
	if err != nil {
		return nil, resp, err
	}
	for _, key := range keys {
		if _, ok := env[key]; !ok {
			continue
		}
		out := new(T)
		if err := env.get(key, out); err != nil {
			return nil, resp, fmt.Errorf("sdclient: %s: decode %q: %w", r.op, key, err)
		}
		return out, resp, nil
	}
	return nil, resp, fmt.Errorf("sdclient: %s: response has no %q object", r.op, keys[0])
}

// list fetches one page of a collection wrapped in key; opts is an options
// struct for encodeQuery (may be nil); extra is appended to the query.
func list[T any](ctx context.Context, c *Client, op, path, key string, opts any, extra ...string) ([]*T, *Response, error) {
	q, err := encodeQuery(opts)
	if err != nil {
		return nil, nil, invalid(op, "%v", err)
	}
	var env envelope
	resp, err := c.do(ctx, request{op: op, method: http.MethodGet, path: path, query: joinQuery(append([]string{q}, extra...)...)}, &env)
	if err != nil {
		return nil, resp, err
	}
	var out []*T
	if err := env.get(key, &out); err != nil {
		return nil, resp, fmt.Errorf("sdclient: %s: decode: %w", op, err)
	}
	return out, resp, nil
}

// paginate walks pages following the Link rel="next" page numbers. page
// points at the Page field of the caller's (copied) options; fetch lists the
// page it names.
func paginate[T any](page *int, fetch func() ([]*T, *Response, error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		for {
			items, resp, err := fetch()
			if err != nil {
				yield(nil, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if resp == nil || resp.NextURL == "" {
				return
			}
			if resp.NextPage == 0 {
				// Stopping here would pass a partial walk off as complete.
				yield(nil, fmt.Errorf("sdclient: pagination: the next-page link has no page number: %w", ErrTruncated))
				return
			}
			cur := max(*page, 1)
			if resp.NextPage <= cur {
				yield(nil, fmt.Errorf("sdclient: pagination: next page %d does not follow page %d", resp.NextPage, cur))
				return
			}
			*page = resp.NextPage
		}
	}
}

// listAll walks every page of a list. It works on a copy of the caller's
// options (100 per page unless set) whose page paginate advances; list reads
// the page the copy names.
func listAll[T, O any, P interface {
	*O
	pageOptions
}](ctx context.Context, opts P, list func(context.Context, P) ([]*T, *Response, error)) iter.Seq2[*T, error] {
	var base O
	if opts != nil {
		base = *opts
	}
	return func(yield func(*T, error) bool) {
		o := P(new(O)) // a fresh copy per range: ranging again starts over
		*o = base
		lo := o.listOptions()
		allPages(lo)
		paginate(&lo.Page, func() ([]*T, *Response, error) { return list(ctx, o) })(yield)
	}
}

// pageOptions are list options: ListOptions itself or a struct embedding it.
type pageOptions interface{ listOptions() *ListOptions }

func (o *ListOptions) listOptions() *ListOptions { return o }

// allPages prepares a copy of list options for walking every page: 100 per
// page unless the caller chose otherwise.
func allPages(lo *ListOptions) {
	if lo.PerPage == 0 {
		lo.PerPage = 100
	}
}
