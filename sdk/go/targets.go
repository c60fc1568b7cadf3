package klaxon

import (
	"context"
	"net/http"
	"regexp"
)

// Target is a recipient, group or schedule as a name or uuid resolves to it.
type Target struct {
	// Kind is "recipient", "group" or "schedule".
	Kind string `json:"kind"`
	UUID string `json:"uuid"`
	Name string `json:"name"`
}

var uuidPattern = regexp.MustCompile(`^(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// ResolveTarget finds the recipient, group or schedule a uuid or a name names
// through the gateway's resolver (scope notifications:send). A name no target
// has is a 404 *Error; one that several targets share is a 409 *Error with the
// code "ambiguous_name", whose Detail lists each match with its uuid.
func (c *Client) ResolveTarget(ctx context.Context, ref string) (*Target, error) {
	var answer Target
	r := request{method: http.MethodGet, path: path("api", "v1", "targets", ref), policy: idempotent}
	if _, err := c.t.do(ctx, r, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}

// TargetUUID is ref itself when it is a uuid, else the uuid of the one target
// ResolveTarget finds for the name (a uuid costs no request).
func (c *Client) TargetUUID(ctx context.Context, ref string) (string, error) {
	if uuidPattern.MatchString(ref) {
		return ref, nil
	}
	target, err := c.ResolveTarget(ctx, ref)
	if err != nil {
		return "", err
	}
	return target.UUID, nil
}
