package adminapi

import (
	"context"
	"time"

	"github.com/lectern/lectern/storage"
)

const (
	kindPost kind = "post"
	kindPage kind = "page"
)

func toPost(p *storage.Post) Post {
	return Post{Id: p.ID, Slug: p.Slug, Title: p.Title, Body: p.Body, Status: PublicationStatus(p.Status), AuthorId: p.AuthorID,
		PublishedAt: p.PublishedAt, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// validateText checks what posts and pages share: a slug, a title, a body
// and a publication status.
func validateText(slug, title, body, status string) error {
	var f fields
	f.slug("slug", slug)
	f.text("title", title, 1, 300, false)
	f.text("body", body, 0, 100000, true)
	f.status("status", status)
	return f.err()
}

func validatePost(p *storage.Post) error { return validateText(p.Slug, p.Title, p.Body, p.Status) }

// published keeps a post's publication time: set when it is first
// published, cleared when it returns to draft.
func published(status string, at *time.Time, now time.Time) *time.Time {
	switch {
	case status != storage.StatusPublished:
		return nil
	case at == nil:
		return ptr(now.UTC())
	}
	return at
}

var posts = resource[storage.Post, Post]{kind: kindPost, records: Store.PostRecords, view: toPost, validate: validatePost, unique: "slug"}

// ListPosts implements GET /posts (posts:read).
func (h *Handler) ListPosts(ctx context.Context, req ListPostsRequestObject) (ListPostsResponseObject, error) {
	return list[ListPosts200JSONResponse](ctx, h, posts, req.Params.Cursor, req.Params.Limit)
}

// CreatePost implements POST /posts (posts:write); the caller is the author.
func (h *Handler) CreatePost(ctx context.Context, req CreatePostRequestObject) (CreatePostResponseObject, error) {
	b := req.Body
	status := string(orDefault(b.Status, PublicationStatusDraft))
	p, err := posts.create(ctx, h, &storage.Post{Slug: b.Slug, Title: b.Title, Body: orDefault(b.Body, ""), Status: status,
		AuthorID: callerOf(ctx).token.Subject, PublishedAt: published(status, nil, h.now())})
	return CreatePost201JSONResponse(p), err
}

// GetPost implements GET /posts/{postId} (posts:read).
func (h *Handler) GetPost(ctx context.Context, req GetPostRequestObject) (GetPostResponseObject, error) {
	p, err := posts.get(ctx, h, req.PostId)
	return GetPost200JSONResponse(p), err
}

// UpdatePost implements PATCH /posts/{postId} (posts:write).
func (h *Handler) UpdatePost(ctx context.Context, req UpdatePostRequestObject) (UpdatePostResponseObject, error) {
	b := req.Body
	p, err := posts.change(ctx, h, req.PostId, func(p *storage.Post) {
		set(&p.Slug, b.Slug)
		set(&p.Title, b.Title)
		set(&p.Body, b.Body)
		setAs(&p.Status, b.Status)
		p.PublishedAt = published(p.Status, p.PublishedAt, h.now())
	})
	return UpdatePost200JSONResponse(p), err
}

// DeletePost implements DELETE /posts/{postId} (posts:write); its comments
// go with it.
func (h *Handler) DeletePost(ctx context.Context, req DeletePostRequestObject) (DeletePostResponseObject, error) {
	_, err := posts.delete(ctx, h, req.PostId)
	return DeletePost204Response{}, err
}

func toPage(p *storage.SitePage) Page {
	return Page{Id: p.ID, Slug: p.Slug, Title: p.Title, Body: p.Body, Status: PublicationStatus(p.Status), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func validatePage(p *storage.SitePage) error { return validateText(p.Slug, p.Title, p.Body, p.Status) }

var pages = resource[storage.SitePage, Page]{kind: kindPage, records: Store.PageRecords, view: toPage, validate: validatePage, unique: "slug"}

// ListPages implements GET /pages (pages:read).
func (h *Handler) ListPages(ctx context.Context, req ListPagesRequestObject) (ListPagesResponseObject, error) {
	return list[ListPages200JSONResponse](ctx, h, pages, req.Params.Cursor, req.Params.Limit)
}

// CreatePage implements POST /pages (pages:write).
func (h *Handler) CreatePage(ctx context.Context, req CreatePageRequestObject) (CreatePageResponseObject, error) {
	b := req.Body
	p, err := pages.create(ctx, h, &storage.SitePage{Slug: b.Slug, Title: b.Title, Body: orDefault(b.Body, ""),
		Status: string(orDefault(b.Status, PublicationStatusDraft))})
	return CreatePage201JSONResponse(p), err
}

// GetPage implements GET /pages/{pageId} (pages:read).
func (h *Handler) GetPage(ctx context.Context, req GetPageRequestObject) (GetPageResponseObject, error) {
	p, err := pages.get(ctx, h, req.PageId)
	return GetPage200JSONResponse(p), err
}

// UpdatePage implements PATCH /pages/{pageId} (pages:write).
func (h *Handler) UpdatePage(ctx context.Context, req UpdatePageRequestObject) (UpdatePageResponseObject, error) {
	b := req.Body
	p, err := pages.change(ctx, h, req.PageId, func(p *storage.SitePage) {
		set(&p.Slug, b.Slug)
		set(&p.Title, b.Title)
		set(&p.Body, b.Body)
		setAs(&p.Status, b.Status)
	})
	return UpdatePage200JSONResponse(p), err
}

// DeletePage implements DELETE /pages/{pageId} (pages:write).
func (h *Handler) DeletePage(ctx context.Context, req DeletePageRequestObject) (DeletePageResponseObject, error) {
	_, err := pages.delete(ctx, h, req.PageId)
	return DeletePage204Response{}, err
}
