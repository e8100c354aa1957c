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

func validatePost(p *storage.Post) error {
	var f fields
	f.slug("slug", p.Slug)
	f.text("title", p.Title, 1, 300, false)
	f.text("body", p.Body, 0, 100000, true)
	f.status("status", p.Status)
	return f.err()
}

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

// ListPosts implements GET /posts (posts:read).
func (h *Handler) ListPosts(ctx context.Context, req ListPostsRequestObject) (ListPostsResponseObject, error) {
	p, err := keysetPage(ctx, h.store.PostRecords(), req.Params.Cursor, req.Params.Limit, toPost)
	if err != nil {
		return nil, err
	}
	return ListPosts200JSONResponse{Items: p.items, NextCursor: p.next, TotalCount: p.total}, nil
}

// CreatePost implements POST /posts (posts:write); the caller is the author.
func (h *Handler) CreatePost(ctx context.Context, req CreatePostRequestObject) (CreatePostResponseObject, error) {
	b := req.Body
	p := &storage.Post{Slug: b.Slug, Title: b.Title, Body: orDefault(b.Body, ""), Status: string(orDefault(b.Status, PublicationStatusDraft)),
		AuthorID: callerOf(ctx).token.Subject}
	p.PublishedAt = published(p.Status, nil, h.now())
	if err := createRecord(ctx, h, h.store.PostRecords(), kindPost, p, validatePost, "slug"); err != nil {
		return nil, err
	}
	return CreatePost201JSONResponse(toPost(p)), nil
}

// GetPost implements GET /posts/{postId} (posts:read).
func (h *Handler) GetPost(ctx context.Context, req GetPostRequestObject) (GetPostResponseObject, error) {
	p, err := getRecord(ctx, h.store.PostRecords(), kindPost, req.PostId)
	if err != nil {
		return nil, err
	}
	return GetPost200JSONResponse(toPost(p)), nil
}

// UpdatePost implements PATCH /posts/{postId} (posts:write).
func (h *Handler) UpdatePost(ctx context.Context, req UpdatePostRequestObject) (UpdatePostResponseObject, error) {
	b := req.Body
	p, err := updateRecord(ctx, h, h.store.PostRecords(), kindPost, req.PostId, func(p *storage.Post) error {
		set(&p.Slug, b.Slug)
		set(&p.Title, b.Title)
		set(&p.Body, b.Body)
		if b.Status != nil {
			p.Status = string(*b.Status)
		}
		p.PublishedAt = published(p.Status, p.PublishedAt, h.now())
		return nil
	}, validatePost, "slug")
	if err != nil {
		return nil, err
	}
	return UpdatePost200JSONResponse(toPost(p)), nil
}

// DeletePost implements DELETE /posts/{postId} (posts:write); its comments
// go with it.
func (h *Handler) DeletePost(ctx context.Context, req DeletePostRequestObject) (DeletePostResponseObject, error) {
	if err := deleteRecord(ctx, h, h.store.PostRecords(), kindPost, req.PostId, nil); err != nil {
		return nil, err
	}
	return DeletePost204Response{}, nil
}

func toPage(p *storage.SitePage) Page {
	return Page{Id: p.ID, Slug: p.Slug, Title: p.Title, Body: p.Body, Status: PublicationStatus(p.Status), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func validatePage(p *storage.SitePage) error {
	var f fields
	f.slug("slug", p.Slug)
	f.text("title", p.Title, 1, 300, false)
	f.text("body", p.Body, 0, 100000, true)
	f.status("status", p.Status)
	return f.err()
}

// ListPages implements GET /pages (pages:read).
func (h *Handler) ListPages(ctx context.Context, req ListPagesRequestObject) (ListPagesResponseObject, error) {
	p, err := keysetPage(ctx, h.store.PageRecords(), req.Params.Cursor, req.Params.Limit, toPage)
	if err != nil {
		return nil, err
	}
	return ListPages200JSONResponse{Items: p.items, NextCursor: p.next, TotalCount: p.total}, nil
}

// CreatePage implements POST /pages (pages:write).
func (h *Handler) CreatePage(ctx context.Context, req CreatePageRequestObject) (CreatePageResponseObject, error) {
	b := req.Body
	p := &storage.SitePage{Slug: b.Slug, Title: b.Title, Body: orDefault(b.Body, ""), Status: string(orDefault(b.Status, PublicationStatusDraft))}
	if err := createRecord(ctx, h, h.store.PageRecords(), kindPage, p, validatePage, "slug"); err != nil {
		return nil, err
	}
	return CreatePage201JSONResponse(toPage(p)), nil
}

// GetPage implements GET /pages/{pageId} (pages:read).
func (h *Handler) GetPage(ctx context.Context, req GetPageRequestObject) (GetPageResponseObject, error) {
	p, err := getRecord(ctx, h.store.PageRecords(), kindPage, req.PageId)
	if err != nil {
		return nil, err
	}
	return GetPage200JSONResponse(toPage(p)), nil
}

// UpdatePage implements PATCH /pages/{pageId} (pages:write).
func (h *Handler) UpdatePage(ctx context.Context, req UpdatePageRequestObject) (UpdatePageResponseObject, error) {
	b := req.Body
	p, err := updateRecord(ctx, h, h.store.PageRecords(), kindPage, req.PageId, func(p *storage.SitePage) error {
		set(&p.Slug, b.Slug)
		set(&p.Title, b.Title)
		set(&p.Body, b.Body)
		if b.Status != nil {
			p.Status = string(*b.Status)
		}
		return nil
	}, validatePage, "slug")
	if err != nil {
		return nil, err
	}
	return UpdatePage200JSONResponse(toPage(p)), nil
}

// DeletePage implements DELETE /pages/{pageId} (pages:write).
func (h *Handler) DeletePage(ctx context.Context, req DeletePageRequestObject) (DeletePageResponseObject, error) {
	if err := deleteRecord(ctx, h, h.store.PageRecords(), kindPage, req.PageId, nil); err != nil {
		return nil, err
	}
	return DeletePage204Response{}, nil
}
