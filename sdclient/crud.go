package sdclient

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strconv"
)

// Generic bodies of the CRUD methods every resource service shares. noun is
// the singular used in operation names ("agent"), coll the collection path
// ("agents"), key the envelope key of one object ("agent").

func idPath(coll string, id int64) string { return coll + "/" + strconv.FormatInt(id, 10) }

func getByID[T any](ctx context.Context, c *Client, noun, coll, key string, id int64) (*T, *Response, error) {
	op := fmt.Sprintf("get %s %d", noun, id)
	if id <= 0 {
		return nil, nil, invalid(op, "%s id must be positive", noun)
	}
	return getOne[T](ctx, c, op, idPath(coll, id), "", key)
}

func createObj[T any](ctx context.Context, c *Client, noun, coll, key string, body any, check func() error) (*T, *Response, error) {
	op := "create " + noun
	if err := check(); err != nil {
		return nil, nil, invalid(op, "%v", err)
	}
	return sendOne[T](ctx, c, request{op: op, method: http.MethodPost, path: coll, body: body}, key)
}

func updateObj[T, B any](ctx context.Context, c *Client, noun, coll, key string, id int64, body *B) (*T, *Response, error) {
	op := fmt.Sprintf("update %s %d", noun, id)
	if id <= 0 {
		return nil, nil, invalid(op, "%s id must be positive", noun)
	}
	if body == nil {
		return nil, nil, invalid(op, "no update given")
	}
	return sendOne[T](ctx, c, request{op: op, method: http.MethodPut, path: idPath(coll, id), body: body}, key)
}

func deleteByID(ctx context.Context, c *Client, noun, coll string, id int64) (*Response, error) {
	op := fmt.Sprintf("delete %s %d", noun, id)
	if id <= 0 {
		return nil, invalid(op, "%s id must be positive", noun)
	}
	return c.do(ctx, request{op: op, method: http.MethodDelete, path: idPath(coll, id)}, nil)
}

// resource names one collection of the desk for the generic services
// below: noun is the singular of operation names ("agent"), plural their
// plural ("canned responses"), coll the collection path ("agents"), key
// the envelope key of one object ("agent") and listKey that of a page.
type resource struct {
	client  *Client
	noun    string
	plural  string
	coll    string
	key     string
	listKey string
}

// newResource describes a collection whose path, envelope keys and names
// are all made from noun and plural, as most are ("group", "groups").
func newResource(c *Client, noun, plural string) resource {
	return resource{client: c, noun: noun, plural: plural, coll: plural, key: noun, listKey: plural}
}

// listing gives a service List and ListAll over its collection, with list
// options O (ListOptions or a struct embedding it).
type listing[T, O any, P interface {
	*O
	pageOptions
}] struct{ res resource }

// List reads one page of the collection (GET /{collection}).
func (l listing[T, O, P]) List(ctx context.Context, opts P) ([]*T, *Response, error) {
	r := l.res
	return list[T](ctx, r.client, "list "+r.plural, r.coll, r.listKey, opts)
}

// ListAll walks every page of the collection.
func (l listing[T, O, P]) ListAll(ctx context.Context, opts P) iter.Seq2[*T, error] {
	return listAll(ctx, opts, l.List)
}

// editing gives a service Get, Create and Update of objects T with the
// request body B; check says what a create body lacks (nil when complete).
type editing[T, B any] struct {
	res   resource
	check func(*B) error
}

// Get reads an object by id (GET /{collection}/{id}).
func (e editing[T, B]) Get(ctx context.Context, id int64) (*T, *Response, error) {
	r := e.res
	return getByID[T](ctx, r.client, r.noun, r.coll, r.key, id)
}

// Create creates an object (POST /{collection}); the body must have the
// fields the desk requires.
func (e editing[T, B]) Create(ctx context.Context, body *B) (*T, *Response, error) {
	r := e.res
	return createObj[T](ctx, r.client, r.noun, r.coll, r.key, body, func() error { return e.check(body) })
}

// Update changes the set fields of an object (PUT /{collection}/{id}).
func (e editing[T, B]) Update(ctx context.Context, id int64, body *B) (*T, *Response, error) {
	r := e.res
	return updateObj[T](ctx, r.client, r.noun, r.coll, r.key, id, body)
}

// deleting gives a service Delete.
type deleting struct{ res resource }

// Delete deletes an object (DELETE /{collection}/{id}, 204).
func (d deleting) Delete(ctx context.Context, id int64) (*Response, error) {
	r := d.res
	return deleteByID(ctx, r.client, r.noun, r.coll, id)
}

// listOf is the listing of objects T of a collection with list options O.
func listOf[T, O any, P interface {
	*O
	pageOptions
}](r resource) listing[T, O, P] {
	return listing[T, O, P]{r}
}

// editOf is the editing of objects T of a collection whose create bodies B
// check checks.
func editOf[T, B any](r resource, check func(*B) error) editing[T, B] {
	return editing[T, B]{r, check}
}

// listChildren reads one page of the records under a parent (a ticket's
// conversations, a category's folders); the parent's id must be positive.
func listChildren[T any](ctx context.Context, c *Client, op, parent string, parentID int64, path, key string, opts *ListOptions, extra ...string) ([]*T, *Response, error) {
	if parentID <= 0 {
		return nil, nil, invalid(op, "%s id must be positive", parent)
	}
	return list[T](ctx, c, op, path, key, opts, extra...)
}

// listAllChildren walks every page of the records under a parent; list
// reads one page of them.
func listAllChildren[T any](ctx context.Context, parentID int64, opts *ListOptions, list func(context.Context, int64, *ListOptions) ([]*T, *Response, error)) iter.Seq2[*T, error] {
	return listAll(ctx, opts, func(ctx context.Context, o *ListOptions) ([]*T, *Response, error) {
		return list(ctx, parentID, o)
	})
}
