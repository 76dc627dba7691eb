package ocm

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	sdk "github.com/openshift-online/ocm-sdk-go"
	cmv1 "github.com/openshift-online/ocm-sdk-go/clustersmgmt/v1"
	ocmerrors "github.com/openshift-online/ocm-sdk-go/errors"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Break-glass credentials live under /api/clusters_mgmt/v1. The answers of
// the calls that return one (create, get, list) hold a kubeconfig, so
// those calls read their bodies here rather than through the SDK's
// clients: the SDK's decode errors quote the bytes before a fault, and its
// content-type check quotes the body, and a kubeconfig must never reach an
// error or a log line. An answer that cannot be read is a
// *cs.UnreadableError, which describes it without a byte of it. The body
// is still decoded by the SDK's own unmarshallers.

// maxCredentialBody bounds one answer: a kubeconfig is a few KB, and a
// cluster has few credentials.
const maxCredentialBody = 4 << 20

// credentialNames are the members a credential answer may have; a JSON
// pointer made of others is not quoted (a malformed body could put
// anything in a member name).
var credentialNames = map[string]bool{
	"kind": true, "id": true, "href": true, "username": true, "status": true, "kubeconfig": true,
	"expiration_timestamp": true, "revocation_timestamp": true, "items": true, "page": true, "size": true, "total": true,
	"code": true, "reason": true, "operation_id": true, "details": true,
}

// credentialShape mirrors a credential's JSON, only to find which field
// of a body the SDK could not decode.
type credentialShape struct {
	Kind                string    `json:"kind"`
	ID                  string    `json:"id"`
	HREF                string    `json:"href"`
	Username            string    `json:"username"`
	Status              string    `json:"status"`
	Kubeconfig          string    `json:"kubeconfig"`
	ExpirationTimestamp time.Time `json:"expiration_timestamp"`
	RevocationTimestamp time.Time `json:"revocation_timestamp"`
}

type credentialPage struct {
	Page  int               `json:"page"`
	Size  int               `json:"size"`
	Total *int              `json:"total"`
	Items []credentialShape `json:"items"`
}

func (c *Client) PostBreakGlassCredential(ctx context.Context, clusterHref string) (cs.BreakGlassCredential, error) {
	return call(ctx, c, "PostBreakGlassCredential", clusterHref, func(ctx context.Context) (cs.BreakGlassCredential, error) {
		id, err := parseCluster("cluster href", clusterHref)
		if err != nil {
			return cs.BreakGlassCredential{}, fmt.Errorf("posting break-glass credential: %w", err)
		}
		spec, err := cmv1.NewBreakGlassCredential().Build()
		var body bytes.Buffer
		if err == nil {
			err = cmv1.MarshalBreakGlassCredential(spec, &body)
		}
		if err != nil {
			return cs.BreakGlassCredential{}, fmt.Errorf("posting break-glass credential: %w", err)
		}
		a, err := c.secretCall(ctx, c.conn, http.MethodPost, clustersMgmtHref(id)+"/break_glass_credentials", body.Bytes())
		if err != nil {
			return cs.BreakGlassCredential{}, fmt.Errorf("posting break-glass credential for %s: %w", clusterHref, err)
		}
		o, err := a.credential()
		if err != nil {
			return cs.BreakGlassCredential{}, fmt.Errorf("posting break-glass credential for %s: %w", clusterHref, err)
		}
		return credentialFrom(o), nil
	})
}

func (c *Client) GetBreakGlassCredential(ctx context.Context, href string) (cs.BreakGlassCredential, error) {
	return call(ctx, c, "GetBreakGlassCredential", href, func(ctx context.Context) (cs.BreakGlassCredential, error) {
		cid, id, err := parseChild("break-glass credential href", href, cs.BreakGlassSegment)
		if err != nil {
			return cs.BreakGlassCredential{}, fmt.Errorf("getting break-glass credential: %w", err)
		}
		path := clustersMgmtHref(cid) + cs.BreakGlassSegment + id
		a, err := c.secretCall(ctx, c.conn, http.MethodGet, path, nil)
		if err != nil {
			return cs.BreakGlassCredential{}, fmt.Errorf("getting break-glass credential %s: %w", href, err)
		}
		o, err := a.credential()
		if err != nil {
			return cs.BreakGlassCredential{}, fmt.Errorf("getting break-glass credential %s: %w", href, err)
		}
		out := credentialFrom(o)
		if out.Href == "" {
			out.Href = path
		}
		return out, nil
	})
}

// ListBreakGlassCredentials pages through every credential of the cluster.
func (c *Client) ListBreakGlassCredentials(ctx context.Context, clusterHref string) ([]cs.BreakGlassCredential, error) {
	return call(ctx, c, "ListBreakGlassCredentials", clusterHref, func(ctx context.Context) ([]cs.BreakGlassCredential, error) {
		id, err := parseCluster("cluster href", clusterHref)
		if err != nil {
			return nil, fmt.Errorf("listing break-glass credentials: %w", err)
		}
		path := clustersMgmtHref(id) + "/break_glass_credentials"
		out, err := collect(ctx, "GET "+path, maxListed, func(ctx context.Context, page int) ([]cs.BreakGlassCredential, int, bool, error) {
			a, err := c.secretCall(ctx, c.lists, http.MethodGet, path+"?page="+strconv.Itoa(page), nil)
			if err != nil {
				return nil, 0, false, err
			}
			items, total, err := a.credentialList()
			if err != nil {
				return nil, 0, false, err
			}
			var got []cs.BreakGlassCredential
			for _, o := range items {
				got = append(got, credentialFrom(o))
			}
			return got, derefOr(total, 0), total != nil, nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing break-glass credentials of %s: %w", clusterHref, err)
		}
		return out, nil
	})
}

// DeleteBreakGlassCredentials revokes every credential of the cluster. Its
// answer holds no credential, so the SDK's client reads it.
func (c *Client) DeleteBreakGlassCredentials(ctx context.Context, clusterHref string) error {
	return call0(ctx, c, "DeleteBreakGlassCredentials", clusterHref, func(ctx context.Context) error {
		id, err := parseCluster("cluster href", clusterHref)
		if err != nil {
			return fmt.Errorf("revoking break-glass credentials: %w", err)
		}
		resp, err := cmv1.NewBreakGlassCredentialsClient(c.conn, clustersMgmtHref(id)+"/break_glass_credentials").Delete().SendContext(ctx)
		if err := csError(err, resp.Status()); err != nil {
			return fmt.Errorf("revoking break-glass credentials of %s: %w", clusterHref, err)
		}
		return nil
	})
}

func derefOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// answer is one credential call's answer, read in full.
type answer struct {
	call   string
	status int
	ctype  string
	body   []byte
}

// secretCall sends one request through the connection (its retries,
// authentication and logging included) and reads the answer itself. An
// error status is a *cs.Error as csError makes it; an answer it cannot
// read, a *cs.UnreadableError.
func (c *Client) secretCall(ctx context.Context, conn *sdk.Connection, method, path string, body []byte) (answer, error) {
	call := method + " " + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return answer{}, fmt.Errorf("%s: %w", call, err)
	}
	resp, err := conn.RoundTrip(req)
	if resp != nil {
		defer resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			// The connection's content-type check failed; its error quotes
			// the body.
			return answer{}, &cs.UnreadableError{Call: call, Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
				Bytes: int(resp.ContentLength), Problem: "not JSON"}
		}
		return answer{}, err // no answer: nothing of a body in it
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxCredentialBody+1))
	a := answer{call: call, status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: raw}
	switch {
	case err != nil:
		return answer{}, a.unreadable("", fmt.Sprintf("the body could not be read in full (%v)", err))
	case len(raw) > maxCredentialBody:
		return answer{}, a.unreadable("", fmt.Sprintf("the body is larger than %d bytes", maxCredentialBody))
	case a.status >= 400:
		return answer{}, a.errorStatus()
	}
	return a, nil
}

// errorStatus is the CS error an error answer carries.
func (a answer) errorStatus() error {
	if len(a.body) == 0 {
		return csError(nil, a.status)
	}
	if field, why := checkJSON(a.body); why != "" {
		return a.unreadable(field, "error body: "+why)
	}
	e, err := ocmerrors.UnmarshalErrorStatus(bytes.NewReader(a.body), a.status)
	if err != nil {
		return a.unreadable("", "error body is not a Clusters Service error")
	}
	return csError(e, a.status)
}

func (a answer) credential() (*cmv1.BreakGlassCredential, error) {
	if len(a.body) == 0 {
		return nil, errNoBody
	}
	if field, why := checkJSON(a.body); why != "" {
		return nil, a.unreadable(field, why)
	}
	o, err := cmv1.UnmarshalBreakGlassCredential(a.body)
	if err != nil {
		return nil, a.unreadable(shapeField(a.body, &credentialShape{}), "a field does not have the credential's type")
	}
	return o, nil
}

func (a answer) credentialList() ([]*cmv1.BreakGlassCredential, *int, error) {
	if len(a.body) == 0 {
		return nil, nil, errNoBody
	}
	if field, why := checkJSON(a.body); why != "" {
		return nil, nil, a.unreadable(field, why)
	}
	var page struct {
		Total *int           `json:"total"`
		Items jsontext.Value `json:"items"`
	}
	if err := jsonv2.Unmarshal(a.body, &page); err != nil {
		return nil, nil, a.unreadable(shapeField(a.body, &credentialPage{}), "not a credential list")
	}
	if len(page.Items) == 0 {
		return nil, page.Total, nil
	}
	items, err := cmv1.UnmarshalBreakGlassCredentialList([]byte(page.Items))
	if err != nil {
		return nil, nil, a.unreadable(shapeField(a.body, &credentialPage{}), "an item does not have the credential's type")
	}
	return items, page.Total, nil
}

func (a answer) unreadable(field, why string) error {
	return &cs.UnreadableError{Call: a.call, Status: a.status, ContentType: a.ctype, Bytes: len(a.body), Field: field, Problem: why}
}

// checkJSON holds a body to strict JSON (one value, valid UTF-8, no
// duplicate names), which the SDK's lenient decoder does not: a
// kubeconfig with a control byte or a stray value after it is garbage,
// not something to hand ARM. It says where and what failed, in words of
// its own; "" when the body is sound.
func checkJSON(body []byte) (field, why string) {
	if jsontext.Value(body).IsValid() {
		return "", ""
	}
	d := jsontext.NewDecoder(bytes.NewReader(body))
	_, err := d.ReadValue()
	var se *jsontext.SyntacticError
	switch {
	case err == nil:
		return "", "data after the JSON value"
	case errors.As(err, &se) && errors.Is(se.Err, io.ErrUnexpectedEOF):
		return safePointer(se.JSONPointer), "the JSON is cut short"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return safePointer(d.StackPointer()), "the JSON is cut short"
	case errors.As(err, &se):
		return safePointer(se.JSONPointer), "malformed JSON"
	}
	return "", "malformed JSON"
}

// shapeField is the field of body that does not decode into v, by a JSON
// pointer that names only fields of the credential model.
func shapeField(body []byte, v any) string {
	var se *jsonv2.SemanticError
	if err := jsonv2.Unmarshal(body, v); errors.As(err, &se) {
		return safePointer(se.JSONPointer)
	}
	return ""
}

// safePointer is p if every token of it is a credential member name or an
// index, else a stand-in: a member name is the body's, not ours.
func safePointer(p jsontext.Pointer) string {
	if p == "" {
		return "(the whole body)"
	}
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err != nil && !credentialNames[tok] {
			return "(a member outside the credential model)"
		}
	}
	return string(p)
}
