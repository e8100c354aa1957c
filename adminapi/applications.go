package adminapi

import (
	"context"
	"errors"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
)

// Member OAuth applications (spec §Authentication 5, "member audience"):
// created by operators, visible once the "MCP connections" beta is on.
// While it is off the operations answer 404 with a problem saying why, as
// the admin area hides the page: the feature does not exist at the site.
// They need school:write, reads included: an application's redirect URIs
// and scopes are configuration of the school.

func toApplication(c *storage.Client) OAuthApplication {
	return OAuthApplication{ClientId: c.ClientID, Name: c.Name, Type: ClientType(c.Type), ApplicationType: ApplicationType(c.ApplicationType),
		RedirectUris: c.RedirectURIs, Scopes: c.Scopes, CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		LastUsedAt: c.LastUsedAt, ResourceServer: c.ResourceServer}
}

func (h *Handler) requireMCPBeta(ctx context.Context) error {
	if !callerOf(ctx).site.MCPConnections {
		return &problem{Status: 404, Type: typeFeatureDisabled, Title: "Feature not enabled",
			Detail: `OAuth applications need the "MCP connections" beta; enable it with PATCH /school (betaFeatures.mcpConnections)`}
	}
	return nil
}

// application returns one of the site's operator-created applications.
func (h *Handler) application(ctx context.Context, clientID string) (*storage.Client, error) {
	if err := h.requireMCPBeta(ctx); err != nil {
		return nil, err
	}
	c, err := h.platform.Application(ctx, siteOf(ctx), clientID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNotFound("no such OAuth application at this site")
	}
	return c, err
}

func memberScopes(in *[]MemberScope) []string {
	if in == nil {
		return nil
	}
	out := make([]string, 0, len(*in))
	for _, s := range *in {
		out = append(out, string(s))
	}
	return out
}

// ListOAuthApplications implements GET /oauth-applications (school:write).
func (h *Handler) ListOAuthApplications(ctx context.Context, req ListOAuthApplicationsRequestObject) (ListOAuthApplicationsResponseObject, error) {
	if err := h.requireMCPBeta(ctx); err != nil {
		return nil, err
	}
	p, err := pageOf(req.Params.Cursor, req.Params.Limit)
	if err != nil {
		return nil, err
	}
	// The operators' applications of one site are few (people create them
	// by hand): read whole, paged by offset, oldest first.
	apps, err := h.platform.Applications(ctx, siteOf(ctx))
	if err != nil {
		return nil, err
	}
	from := int(min(p.After, int64(len(apps))))
	page := apps[from:min(from+p.Limit, len(apps))]
	out := OAuthApplicationList{Items: make([]OAuthApplication, 0, len(page)), TotalCount: len(apps), NextCursor: offsetNext(p, len(page), len(apps))}
	for i := range page {
		out.Items = append(out.Items, toApplication(&page[i]))
	}
	return ListOAuthApplications200JSONResponse(out), nil
}

// CreateOAuthApplication implements POST /oauth-applications
// (school:write) through platform.CreateClient: a reviewed member client.
func (h *Handler) CreateOAuthApplication(ctx context.Context, req CreateOAuthApplicationRequestObject) (CreateOAuthApplicationResponseObject, error) {
	if err := h.requireMCPBeta(ctx); err != nil {
		return nil, err
	}
	b := req.Body
	for _, s := range memberScopes(b.Scopes) {
		if !scope.IsIdentity(s) && !scope.IsMember(s) {
			return nil, invalidField("scopes", "a member application may only have openid, profile, email, account:read and account:write")
		}
	}
	c, secret, err := h.platform.CreateClient(ctx, siteOf(ctx), clientmeta.ClientSpec{
		Name: b.Name, RedirectURIs: b.RedirectUris, Scopes: memberScopes(b.Scopes),
		Audience: storage.AudienceMember, Confidential: orDefault(b.Confidential, false),
		Source: storage.SourceAdmin, Reviewed: true, CreatedBy: callerOf(ctx).token.Subject,
		ResourceServer: orDefault(b.ResourceServer, false),
	})
	if err != nil {
		return nil, err
	}
	h.audit(ctx, "client.created", c.ClientID, map[string]any{"audience": c.Audience, "type": c.Type, "resource_server": c.ResourceServer})
	a := toApplication(c)
	out := OAuthApplicationWithSecret{ClientId: a.ClientId, Name: a.Name, Type: a.Type, ApplicationType: a.ApplicationType,
		RedirectUris: a.RedirectUris, Scopes: a.Scopes, CreatedBy: a.CreatedBy, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		ResourceServer: a.ResourceServer}
	if secret != "" {
		out.ClientSecret = &secret
	}
	return CreateOAuthApplication201JSONResponse(out), nil
}

// GetOAuthApplication implements GET /oauth-applications/{clientId}
// (school:write).
func (h *Handler) GetOAuthApplication(ctx context.Context, req GetOAuthApplicationRequestObject) (GetOAuthApplicationResponseObject, error) {
	c, err := h.application(ctx, req.ClientId)
	if err != nil {
		return nil, err
	}
	return GetOAuthApplication200JSONResponse(toApplication(c)), nil
}

// UpdateOAuthApplication implements PATCH /oauth-applications/{clientId}
// (school:write) through platform.UpdateApplication.
func (h *Handler) UpdateOAuthApplication(ctx context.Context, req UpdateOAuthApplicationRequestObject) (UpdateOAuthApplicationResponseObject, error) {
	if _, err := h.application(ctx, req.ClientId); err != nil {
		return nil, err
	}
	b := req.Body
	ch := platform.ApplicationChange{Name: b.Name, Scopes: memberScopes(b.Scopes), ResourceServer: b.ResourceServer}
	if b.RedirectUris != nil {
		ch.RedirectURIs = *b.RedirectUris
		if len(ch.RedirectURIs) == 0 {
			return nil, invalidField("redirectUris", "at least one redirect URI is required")
		}
	}
	c, err := h.platform.UpdateApplication(ctx, siteOf(ctx), req.ClientId, ch)
	if err != nil {
		return nil, err
	}
	var changed map[string]any
	if b.ResourceServer != nil {
		changed = map[string]any{"resource_server": c.ResourceServer}
	}
	h.audit(ctx, "client.updated", c.ClientID, changed)
	return UpdateOAuthApplication200JSONResponse(toApplication(c)), nil
}

// RotateOAuthApplicationSecret implements POST
// /oauth-applications/{clientId}/rotate-secret (school:write).
func (h *Handler) RotateOAuthApplicationSecret(ctx context.Context, req RotateOAuthApplicationSecretRequestObject) (RotateOAuthApplicationSecretResponseObject, error) {
	if _, err := h.application(ctx, req.ClientId); err != nil {
		return nil, err
	}
	secret, err := h.platform.RotateSecret(ctx, siteOf(ctx), req.ClientId)
	if err != nil {
		return nil, err
	}
	h.audit(ctx, "client.secret_rotated", req.ClientId, nil)
	return RotateOAuthApplicationSecret200JSONResponse{ClientId: req.ClientId, ClientSecret: secret}, nil
}

// DeleteOAuthApplication implements DELETE /oauth-applications/{clientId}
// (school:write): its grants are revoked first, so its tokens stop working
// at once.
func (h *Handler) DeleteOAuthApplication(ctx context.Context, req DeleteOAuthApplicationRequestObject) (DeleteOAuthApplicationResponseObject, error) {
	if _, err := h.application(ctx, req.ClientId); err != nil {
		return nil, err
	}
	n, err := h.platform.DeleteApplication(ctx, siteOf(ctx), req.ClientId, h.revoker, h.now())
	if err != nil {
		return nil, err
	}
	h.audit(ctx, "client.deleted", req.ClientId, map[string]any{"grants_revoked": n})
	return DeleteOAuthApplication204Response{}, nil
}
