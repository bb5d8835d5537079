package sdclient

import (
	"errors"
	"testing"
)

func TestSolutions(t *testing.T) {
	c, mux, _ := setup(t)
	route(t, mux, "GET /solutions/categories", "", "", 200, `{"categories":[{"id":1,"name":"General","visible_in_portals":[3]}]}`)
	route(t, mux, "GET /solutions/folders", "category_id=1", "", 200, `{"folders":[{"id":2,"category_id":1,"name":"VPN"}]}`)
	route(t, mux, "GET /solutions/articles", "per_page=100&folder_id=2", "", 200, `{"articles":[{"id":3,"title":"Reset VPN","folder_id":2,"status":2,"tags":["vpn"]}]}`)

	cats, _, err := c.Solutions.ListCategories(t.Context(), nil)
	if err != nil || cats[0].Name != "General" {
		t.Fatalf("categories: %v", err)
	}
	folders, _, err := c.Solutions.ListFolders(t.Context(), 1, nil)
	if err != nil || folders[0].CategoryID != 1 {
		t.Fatalf("folders: %v", err)
	}
	var titles []string
	for a, err := range c.Solutions.ListAllArticles(t.Context(), 2, nil) {
		if err != nil {
			t.Fatal(err)
		}
		titles = append(titles, a.Title)
	}
	if len(titles) != 1 || titles[0] != "Reset VPN" {
		t.Errorf("articles %v", titles)
	}
	if _, _, err := c.Solutions.ListFolders(t.Context(), 0, nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("category 0: %v", err)
	}
	if _, _, err := c.Solutions.ListArticles(t.Context(), -1, nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("folder -1: %v", err)
	}
}
