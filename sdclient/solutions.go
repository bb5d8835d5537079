package sdclient

import (
	"context"
	"fmt"
	"iter"
	"strconv"
)

// SolutionsService reads the knowledge base: categories, their folders and
// the folders' articles.
type SolutionsService service

// ListCategories reads one page of solution categories
// (GET /solutions/categories).
func (s *SolutionsService) ListCategories(ctx context.Context, opts *ListOptions) ([]*SolutionCategory, *Response, error) {
	return list[SolutionCategory](ctx, s.client, "list solution categories", "solutions/categories", "categories", opts)
}

// ListAllCategories walks every page of solution categories.
func (s *SolutionsService) ListAllCategories(ctx context.Context, opts *ListOptions) iter.Seq2[*SolutionCategory, error] {
	return listAll(ctx, opts, s.ListCategories)
}

// ListFolders reads one page of the folders of a category
// (GET /solutions/folders?category_id=).
func (s *SolutionsService) ListFolders(ctx context.Context, categoryID int64, opts *ListOptions) ([]*SolutionFolder, *Response, error) {
	op := fmt.Sprintf("list solution folders of category %d", categoryID)
	return listChildren[SolutionFolder](ctx, s.client, op, "category", categoryID, "solutions/folders", "folders", opts, "category_id="+strconv.FormatInt(categoryID, 10))
}

// ListAllFolders walks every page of a category's folders.
func (s *SolutionsService) ListAllFolders(ctx context.Context, categoryID int64, opts *ListOptions) iter.Seq2[*SolutionFolder, error] {
	return listAllChildren(ctx, categoryID, opts, s.ListFolders)
}

// ListArticles reads one page of the articles of a folder
// (GET /solutions/articles?folder_id=).
func (s *SolutionsService) ListArticles(ctx context.Context, folderID int64, opts *ListOptions) ([]*SolutionArticle, *Response, error) {
	op := fmt.Sprintf("list solution articles of folder %d", folderID)
	return listChildren[SolutionArticle](ctx, s.client, op, "folder", folderID, "solutions/articles", "articles", opts, "folder_id="+strconv.FormatInt(folderID, 10))
}

// ListAllArticles walks every page of a folder's articles.
func (s *SolutionsService) ListAllArticles(ctx context.Context, folderID int64, opts *ListOptions) iter.Seq2[*SolutionArticle, error] {
	return listAllChildren(ctx, folderID, opts, s.ListArticles)
}
