package adminapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/lectern/lectern/storage"
)

// resource is a record kind the admin API reads and writes the same way as
// the others: rows of the caller's site in a storage.Records, an audit event
// per write, 404 for another site's ID, 409 for a taken unique value or a
// row still in use. The handlers of a kind differ only in how a request
// becomes a row; everything else is here, once.
//
// Handlers pass a helper's error on with their answer built from its
// (then zero) value: `v, err := plans.get(...); return
// GetMembershipPlan200JSONResponse(v), err`. The strict handler of api.gen.go
// answers an error and never looks at the answer beside it.
type resource[T, V any] struct {
	kind kind
	// records is the kind's table (a method expression of Store).
	records func(Store) storage.Records[T]
	// view is the row as the API shows it.
	view func(*T) V
	// validate checks a row before it is written; nil: nothing to check.
	validate func(*T) error
	// unique names the field a uniqueness conflict is about; "": none.
	unique string
	// inUse refuses to delete a row others depend on; nil: none do.
	inUse func(ctx context.Context, h *Handler, rec *T) error
}

// row reads a row of the caller's site; another site's ID is 404.
func (r resource[T, V]) row(ctx context.Context, h *Handler, id int64) (*T, error) {
	rec, err := r.records(h.store).Get(ctx, siteOf(ctx), id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNotFound(fmt.Sprintf("no %s %d at this site", r.kind.noun(), id))
	}
	return rec, err
}

// get is row, as the API shows it.
func (r resource[T, V]) get(ctx context.Context, h *Handler, id int64) (V, error) {
	rec, err := r.row(ctx, h, id)
	if err != nil {
		var zero V
		return zero, err
	}
	return r.view(rec), nil
}

// create validates and stores a new row and records "<kind>.created".
func (r resource[T, V]) create(ctx context.Context, h *Handler, rec *T) (V, error) {
	var zero V
	if err := r.check(rec); err != nil {
		return zero, err
	}
	if err := r.records(h.store).Create(ctx, siteOf(ctx), rec); err != nil {
		return zero, r.conflict(err)
	}
	h.audit(ctx, string(r.kind)+".created", r.kind.target(idOf(rec)), nil)
	return r.view(rec), nil
}

// update reads a row, applies a change, validates and stores it, and
// records "<kind>.updated".
func (r resource[T, V]) update(ctx context.Context, h *Handler, id int64, apply func(*T)) (*T, error) {
	rec, err := r.row(ctx, h, id)
	if err != nil {
		return nil, err
	}
	apply(rec)
	if err := r.check(rec); err != nil {
		return nil, err
	}
	if err := r.records(h.store).Update(ctx, siteOf(ctx), rec); err != nil {
		return nil, r.conflict(err)
	}
	h.audit(ctx, string(r.kind)+".updated", r.kind.target(id), nil)
	return rec, nil
}

// change is update, as the API shows the row.
func (r resource[T, V]) change(ctx context.Context, h *Handler, id int64, apply func(*T)) (V, error) {
	rec, err := r.update(ctx, h, id, apply)
	if err != nil {
		var zero V
		return zero, err
	}
	return r.view(rec), nil
}

// delete deletes a row once inUse (if any) agrees, records
// "<kind>.deleted" and returns the row it deleted.
func (r resource[T, V]) delete(ctx context.Context, h *Handler, id int64) (*T, error) {
	rec, err := r.row(ctx, h, id)
	if err != nil {
		return nil, err
	}
	if r.inUse != nil {
		if err := r.inUse(ctx, h, rec); err != nil {
			return nil, err
		}
	}
	if err := r.records(h.store).Delete(ctx, siteOf(ctx), id); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			return nil, errConflict(fmt.Sprintf("the %s is still in use", r.kind.noun()))
		}
		return nil, err
	}
	h.audit(ctx, string(r.kind)+".deleted", r.kind.target(id), nil)
	return rec, nil
}

func (r resource[T, V]) check(rec *T) error {
	if r.validate == nil {
		return nil
	}
	return r.validate(rec)
}

func (r resource[T, V]) conflict(err error) error {
	if errors.Is(err, storage.ErrConflict) && r.unique != "" {
		return errConflict(fmt.Sprintf("another %s at this site has this %s", r.kind.noun(), r.unique),
			InvalidField{Field: r.unique, Message: "is taken"})
	}
	return err
}

// listResponse is the shape of every generated list answer
// (ListCourses200JSONResponse and the rest).
type listResponse[V any] interface {
	~struct {
		Items      []V     `json:"items"`
		NextCursor *string `json:"nextCursor"`
		TotalCount int     `json:"totalCount"`
	}
}

// list answers a keyset-paged list of the kind as the list response R.
func list[R listResponse[V], T, V any](ctx context.Context, h *Handler, r resource[T, V], cursor *string, limit *int, match ...storage.Match) (R, error) {
	p, err := keysetPage(ctx, r.records(h.store), cursor, limit, r.view, match...)
	if err != nil {
		var zero R
		return zero, err
	}
	return R{Items: p.items, NextCursor: p.next, TotalCount: p.total}, nil
}

// refuseIfAny is an inUse check: 409 when match selects any row of recs.
func refuseIfAny[T any](ctx context.Context, recs storage.Records[T], detail string, match storage.Match) error {
	_, n, err := recs.List(ctx, siteOf(ctx), storage.Page{Limit: 1}, match)
	if err != nil {
		return err
	}
	if n > 0 {
		return errConflict(detail)
	}
	return nil
}

// refuseIfUsed returns an inUse check: 409 with detail while any row of
// the table users names the deleted row in field.
func refuseIfUsed[T, U any](users func(Store) storage.Records[U], field, detail string) func(context.Context, *Handler, *T) error {
	return func(ctx context.Context, h *Handler, rec *T) error {
		return refuseIfAny(ctx, users(h.store), detail, storage.Match{Field: field, Value: idOf(rec)})
	}
}
