package sdclient

import (
	"context"
	"fmt"
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
