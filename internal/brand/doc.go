// Package brand dresses every page of a site in the site's appearance
// (PUT /api/v1/appearance, the admin area's Settings): it checks the
// colours for WCAG 2.2 AA contrast when they are set, and serves the
// site's stylesheet of custom properties (/brand.css, versioned and
// cached) and icon (/favicon.svg); pages get their URLs, and the logo's,
// through ui.BrandSource. The shared stylesheet stays one file for every
// site. docs/branding.md has the decisions.
package brand
