package adminapi

import (
	"context"
	"fmt"

	"github.com/lectern/lectern/storage"
)

const (
	kindSection kind = "section"
	kindLecture kind = "lecture"
)

func toSection(s *storage.Section) Section {
	return Section{Id: s.ID, CourseId: s.CourseID, Title: s.Title, Position: s.Position}
}

func toLecture(l *storage.Lecture) Lecture {
	return Lecture{Id: l.ID, CourseId: l.CourseID, SectionId: l.SectionID, Title: l.Title, Position: l.Position,
		DurationSeconds: l.DurationSeconds, FreePreview: l.FreePreview, Status: PublicationStatus(l.Status)}
}

func validateSection(s *storage.Section) error {
	var f fields
	f.text("title", s.Title, 1, 300, false)
	return f.err()
}

func validateLecture(l *storage.Lecture) error {
	var f fields
	f.text("title", l.Title, 1, 300, false)
	if l.DurationSeconds < 0 || l.DurationSeconds > 86400 {
		f.add("durationSeconds", "must be between 0 and 86400")
	}
	f.status("status", l.Status)
	return f.err()
}

var (
	sections = resource[storage.Section, Section]{kind: kindSection, records: Store.SectionRecords,
		view: toSection, validate: validateSection,
		inUse: refuseIfUsed[storage.Section](Store.LectureRecords, "SectionID", "the section still holds lectures; delete or move them first")}
	lectures = resource[storage.Lecture, Lecture]{kind: kindLecture, records: Store.LectureRecords,
		view: toLecture, validate: validateLecture}
)

func toCurriculum(courseID int64, out []storage.SectionOutline) Curriculum {
	c := Curriculum{CourseId: courseID, Sections: make([]CurriculumSection, 0, len(out))}
	for _, s := range out {
		cs := CurriculumSection{Id: s.ID, CourseId: s.CourseID, Title: s.Title, Position: s.Position, Lectures: make([]Lecture, 0, len(s.Lectures))}
		for i := range s.Lectures {
			cs.Lectures = append(cs.Lectures, toLecture(&s.Lectures[i]))
		}
		c.Sections = append(c.Sections, cs)
	}
	return c
}

func (h *Handler) curriculum(ctx context.Context, courseID int64) ([]storage.SectionOutline, error) {
	out, err := h.store.Curriculum(ctx, siteOf(ctx), courseID)
	if err != nil {
		if _, gerr := courses.row(ctx, h, courseID); gerr != nil {
			return nil, gerr
		}
		return nil, err
	}
	return out, nil
}

// GetCurriculum implements GET /courses/{courseId}/curriculum
// (curriculum:read).
func (h *Handler) GetCurriculum(ctx context.Context, req GetCurriculumRequestObject) (GetCurriculumResponseObject, error) {
	out, err := h.curriculum(ctx, req.CourseId)
	if err != nil {
		return nil, err
	}
	return GetCurriculum200JSONResponse(toCurriculum(req.CourseId, out)), nil
}

// ReorderCurriculum implements PUT /courses/{courseId}/curriculum
// (curriculum:write). The new order must name the course's sections and
// lectures exactly once each; anything else is 422 and changes nothing.
func (h *Handler) ReorderCurriculum(ctx context.Context, req ReorderCurriculumRequestObject) (ReorderCurriculumResponseObject, error) {
	current, err := h.curriculum(ctx, req.CourseId)
	if err != nil {
		return nil, err
	}
	sections, lectures := map[int64]bool{}, map[int64]bool{}
	for _, s := range current {
		sections[s.ID] = true
		for _, l := range s.Lectures {
			lectures[l.ID] = true
		}
	}
	var f fields
	order := make([]storage.PositionOrder, 0, len(req.Body.Sections))
	seenS, seenL := map[int64]bool{}, map[int64]bool{}
	for i, s := range req.Body.Sections {
		field := fmt.Sprintf("sections[%d].sectionId", i)
		switch {
		case !sections[s.SectionId]:
			f.add(field, "is not a section of this course")
		case seenS[s.SectionId]:
			f.add(field, "names a section twice")
		}
		seenS[s.SectionId] = true
		for j, id := range s.LectureIds {
			field := fmt.Sprintf("sections[%d].lectureIds[%d]", i, j)
			switch {
			case !lectures[id]:
				f.add(field, "is not a lecture of this course")
			case seenL[id]:
				f.add(field, "names a lecture twice")
			}
			seenL[id] = true
		}
		order = append(order, storage.PositionOrder{SectionID: s.SectionId, LectureIDs: s.LectureIds})
	}
	if len(seenS) < len(sections) || len(seenL) < len(lectures) {
		f.add("sections", "must name every section and every lecture of the course")
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	if err := h.store.ReorderCurriculum(ctx, siteOf(ctx), req.CourseId, order); err != nil {
		return nil, err
	}
	h.audit(ctx, "curriculum.reordered", kindCourse.target(req.CourseId), nil)
	out, err := h.curriculum(ctx, req.CourseId)
	if err != nil {
		return nil, err
	}
	return ReorderCurriculum200JSONResponse(toCurriculum(req.CourseId, out)), nil
}

// CreateSection implements POST /courses/{courseId}/sections
// (curriculum:write): the new section goes last.
func (h *Handler) CreateSection(ctx context.Context, req CreateSectionRequestObject) (CreateSectionResponseObject, error) {
	if _, err := courses.row(ctx, h, req.CourseId); err != nil {
		return nil, err
	}
	_, n, err := h.store.SectionRecords().List(ctx, siteOf(ctx), storage.Page{Limit: 1}, storage.Match{Field: "CourseID", Value: req.CourseId})
	if err != nil {
		return nil, err
	}
	s, err := sections.create(ctx, h, &storage.Section{CourseID: req.CourseId, Title: req.Body.Title, Position: n})
	return CreateSection201JSONResponse(s), err
}

// UpdateSection implements PATCH /sections/{sectionId} (curriculum:write).
func (h *Handler) UpdateSection(ctx context.Context, req UpdateSectionRequestObject) (UpdateSectionResponseObject, error) {
	s, err := sections.change(ctx, h, req.SectionId, func(s *storage.Section) { set(&s.Title, req.Body.Title) })
	return UpdateSection200JSONResponse(s), err
}

// DeleteSection implements DELETE /sections/{sectionId} (curriculum:write):
// only an empty section goes, so no lecture disappears by accident.
func (h *Handler) DeleteSection(ctx context.Context, req DeleteSectionRequestObject) (DeleteSectionResponseObject, error) {
	_, err := sections.delete(ctx, h, req.SectionId)
	return DeleteSection204Response{}, err
}

// CreateLecture implements POST /sections/{sectionId}/lectures
// (curriculum:write): the new lecture goes last in its section, as a draft
// unless status says otherwise.
func (h *Handler) CreateLecture(ctx context.Context, req CreateLectureRequestObject) (CreateLectureResponseObject, error) {
	sec, err := sections.row(ctx, h, req.SectionId)
	if err != nil {
		return nil, err
	}
	_, n, err := h.store.LectureRecords().List(ctx, siteOf(ctx), storage.Page{Limit: 1}, storage.Match{Field: "SectionID", Value: sec.ID})
	if err != nil {
		return nil, err
	}
	b := req.Body
	l, err := lectures.create(ctx, h, &storage.Lecture{CourseID: sec.CourseID, SectionID: sec.ID, Title: b.Title, Position: n,
		DurationSeconds: orDefault(b.DurationSeconds, 0), FreePreview: orDefault(b.FreePreview, false),
		Status: string(orDefault(b.Status, PublicationStatusDraft))})
	return CreateLecture201JSONResponse(l), err
}

// UpdateLecture implements PATCH /lectures/{lectureId} (curriculum:write).
func (h *Handler) UpdateLecture(ctx context.Context, req UpdateLectureRequestObject) (UpdateLectureResponseObject, error) {
	b := req.Body
	l, err := lectures.change(ctx, h, req.LectureId, func(l *storage.Lecture) {
		set(&l.Title, b.Title)
		set(&l.DurationSeconds, b.DurationSeconds)
		set(&l.FreePreview, b.FreePreview)
		setAs(&l.Status, b.Status)
	})
	return UpdateLecture200JSONResponse(l), err
}

// DeleteLecture implements DELETE /lectures/{lectureId} (curriculum:write).
func (h *Handler) DeleteLecture(ctx context.Context, req DeleteLectureRequestObject) (DeleteLectureResponseObject, error) {
	_, err := lectures.delete(ctx, h, req.LectureId)
	return DeleteLecture204Response{}, err
}
