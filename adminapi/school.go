package adminapi

import (
	"context"
	"errors"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
)

func toSchool(s *storage.Site) School {
	return School{Name: s.Name, Description: s.Description, Locale: s.Locale, Origin: ptr(s.Origin),
		RegistrationVariant: ptr(RegistrationVariant(s.RegistrationVariant)), IdTokensEnabled: ptr(s.IDTokensEnabled),
		BetaFeatures: BetaFeatures{McpConnections: s.MCPConnectionsBeta}, Accounts: toAccountSettings(s.Accounts())}
}

func toAccountSettings(a storage.AccountSettings) AccountSettings {
	return AccountSettings{SignUp: a.SignUp, MailFromName: a.MailFromName, MailFromAddress: a.MailFromAddress, StaffSecondFactor: a.StaffMFA}
}

// GetSchool implements GET /school (school:read).
func (h *Handler) GetSchool(ctx context.Context, _ GetSchoolRequestObject) (GetSchoolResponseObject, error) {
	s, err := h.store.SiteByID(ctx, siteOf(ctx))
	if err != nil {
		return nil, err
	}
	return GetSchool200JSONResponse(toSchool(s)), nil
}

// UpdateSchool implements PATCH /school (school:write). The change goes
// through platform.UpdateSite, which tells every replica. The registration
// variant belongs to the hosting provider (lectern site update).
func (h *Handler) UpdateSchool(ctx context.Context, req UpdateSchoolRequestObject) (UpdateSchoolResponseObject, error) {
	b := req.Body
	if b.RegistrationVariant != nil {
		return nil, invalidField("registrationVariant", "is read-only; the hosting provider sets it")
	}
	s, err := h.store.SiteByID(ctx, siteOf(ctx))
	if err != nil {
		return nil, err
	}
	set(&s.Name, b.Name)
	set(&s.Description, b.Description)
	set(&s.Locale, b.Locale)
	if b.BetaFeatures != nil {
		set(&s.MCPConnectionsBeta, b.BetaFeatures.McpConnections)
	}
	acct := s.Accounts()
	if b.Accounts != nil {
		set(&acct.SignUp, b.Accounts.SignUp)
		set(&acct.StaffMFA, b.Accounts.StaffSecondFactor)
		set(&acct.MailFromName, b.Accounts.MailFromName)
		set(&acct.MailFromAddress, b.Accounts.MailFromAddress)
		s.SetAccounts(acct)
	}
	var f fields
	f.text("accounts.mailFromName", acct.MailFromName, 0, 200, false)
	if errors.Is(platform.CheckMailFromName(acct.MailFromName), platform.ErrSenderName) {
		f.add("accounts.mailFromName", "cannot be written in a From header; with letters outside ASCII, leave out the backslash")
	}
	if acct.MailFromAddress != "" {
		f.email("accounts.mailFromAddress", acct.MailFromAddress)
	}
	f.text("name", s.Name, 1, 200, false)
	f.text("description", s.Description, 0, 5000, true)
	if len(s.Locale) > 35 || !localeRE.MatchString(s.Locale) {
		f.add("locale", "must be a language tag such as en or pt-BR")
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	if err := h.platform.UpdateSite(ctx, s); err != nil {
		return nil, err
	}
	details := map[string]any{}
	if b.BetaFeatures != nil && b.BetaFeatures.McpConnections != nil {
		details["mcp_connections"] = *b.BetaFeatures.McpConnections
	}
	if b.Accounts != nil {
		details["accounts"] = map[string]any{"sign_up": acct.SignUp, "staff_second_factor": acct.StaffMFA, "mail_from_name": acct.MailFromName, "mail_from_address": acct.MailFromAddress}
	}
	h.audit(ctx, "school.updated", "site", details)
	return UpdateSchool200JSONResponse(toSchool(s)), nil
}
