package adminapi

import (
	"context"

	"github.com/lectern/lectern/storage"
)

const kindComment kind = "comment"

func toComment(c *storage.Comment) Comment {
	return Comment{Id: c.ID, UserId: c.UserID, CourseId: c.CourseID, LectureId: c.LectureID, PostId: c.PostID, Body: c.Body, CreatedAt: c.CreatedAt}
}

var comments = resource[storage.Comment, Comment]{kind: kindComment, records: Store.CommentRecords, view: toComment}

// ListComments implements GET /comments (comments:read), optionally of one
// course or one post.
func (h *Handler) ListComments(ctx context.Context, req ListCommentsRequestObject) (ListCommentsResponseObject, error) {
	var match []storage.Match
	if id := req.Params.CourseId; id != nil {
		match = append(match, storage.Match{Field: "CourseID", Value: *id})
	}
	if id := req.Params.PostId; id != nil {
		match = append(match, storage.Match{Field: "PostID", Value: *id})
	}
	return list[ListComments200JSONResponse](ctx, h, comments, req.Params.Cursor, req.Params.Limit, match...)
}

// GetComment implements GET /comments/{commentId} (comments:read).
func (h *Handler) GetComment(ctx context.Context, req GetCommentRequestObject) (GetCommentResponseObject, error) {
	c, err := comments.get(ctx, h, req.CommentId)
	return GetComment200JSONResponse(c), err
}
