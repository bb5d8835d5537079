package sdclient

import (
	"reflect"
	"unsafe"
)

// ResourceOperations names the operation each method a service has from
// the generic resource types (crud.go) sends, as "Groups.Get" ->
// "GET /groups/{id}", so that the contract test checks them like the
// methods that name theirs in their doc comments. ListAll walks List's
// pages and is left out, like the contract test leaves it out.
func ResourceOperations() map[string]string {
	c, err := New("https://desk.example.com", "key")
	if err != nil {
		panic(err)
	}
	type operator interface{ operations() map[string]string }
	out := map[string]string{}
	cv := reflect.ValueOf(c).Elem()
	for i := range cv.NumField() {
		f := cv.Field(i)
		if f.Kind() != reflect.Pointer || f.Elem().Kind() != reflect.Struct {
			continue
		}
		svc := cv.Type().Field(i).Name
		sv := f.Elem()
		for j := range sv.NumField() {
			if !sv.Type().Field(j).Anonymous {
				continue
			}
			// The embedded fields are unexported: read them through their
			// address, as the package itself may.
			emb := sv.Field(j)
			v := reflect.NewAt(emb.Type(), unsafe.Pointer(emb.UnsafeAddr())).Elem()
			if o, ok := v.Interface().(operator); ok {
				for m, op := range o.operations() {
					out[svc+"."+m] = op
				}
			}
		}
	}
	return out
}

func (l listing[T, O, P]) operations() map[string]string {
	return map[string]string{"List": "GET /" + l.res.coll}
}

func (e editing[T, B]) operations() map[string]string {
	one := "/" + e.res.coll + "/{id}"
	return map[string]string{"Get": "GET " + one, "Create": "POST /" + e.res.coll, "Update": "PUT " + one}
}

func (d deleting) operations() map[string]string {
	return map[string]string{"Delete": "DELETE /" + d.res.coll + "/{id}"}
}
