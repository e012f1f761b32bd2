package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/orbit-loop/orbit/hub"
)

// Client talks to a hub's API.
type Client struct {
	// URL is the hub's base URL, Token the bearer token sent with every
	// request.
	URL   string
	Token string
	HTTP  *http.Client
}

// NewClient returns a client of the hub at url. A request may take up to
// requestTimeout: a batch of 1 MiB waits its turn behind the other pushes
// a busy hub stores (20 at once on a loaded 2-core machine took over 60 s),
// and a push is never on a hook's path; a hub that does not answer at all
// still fails the push, which the next one resumes.
func NewClient(url, token string) *Client {
	return &Client{URL: url, Token: token, HTTP: &http.Client{Timeout: requestTimeout}}
}

// requestTimeout bounds one request to the hub.
const requestTimeout = 5 * time.Minute

// Error is a hub's answer other than success: its status and the problem
// detail it sent.
type Error struct {
	Status int
	Title  string
	Detail string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("hub: %d %s", e.Status, e.Title)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// maxAnswer bounds what the client reads of an answer.
const maxAnswer = 64 << 20

func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte, out any) error {
	u := c.URL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("hub %s: %w", c.URL, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("hub %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("hub %s: read the answer: %w", c.URL, err)
	}
	if resp.StatusCode/100 != 2 {
		var p struct {
			Title  string         `json:"title"`
			Detail string         `json:"detail"`
			State  *hub.FileState `json:"state"`
		}
		if json.Unmarshal(data, &p) != nil || p.Title == "" {
			p.Title = http.StatusText(resp.StatusCode)
		}
		if resp.StatusCode == http.StatusConflict && p.State != nil {
			return &hub.ConflictError{State: *p.State, Reason: p.Detail}
		}
		return &Error{Status: resp.StatusCode, Title: p.Title, Detail: p.Detail}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("hub %s: the answer to %s %s is not what orbit expects: %v", c.URL, method, path, err)
	}
	return nil
}

// State returns what the hub holds of each journal of a project.
func (c *Client) State(ctx context.Context, projectID string) ([]hub.FileState, error) {
	var out struct {
		Files []hub.FileState `json:"files"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/push/state", url.Values{"project": {projectID}}, nil, &out)
	return out.Files, err
}

// Push sends one batch.
func (c *Client) Push(ctx context.Context, b hub.Batch) (hub.PushResult, error) {
	q := url.Values{
		"project":   {b.Project},
		"kind":      {b.Kind},
		"offset":    {strconv.FormatInt(b.Offset, 10)},
		"lines":     {strconv.FormatInt(b.Lines, 10)},
		"tail_hash": {b.TailHash},
	}
	if b.Name != "" {
		q.Set("name", b.Name)
	}
	var res hub.PushResult
	err := c.do(ctx, http.MethodPost, "/api/v1/push", q, b.Data, &res)
	return res, err
}

// Get reads a JSON endpoint of the hub into out.
func (c *Client) Get(ctx context.Context, path string, q url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, q, nil, out)
}

// IsUnreachable reports whether err means the hub did not answer at all
// (down, unreachable, timed out), as opposed to answering with an error.
func IsUnreachable(err error) bool {
	var he *Error
	var ce *hub.ConflictError
	return err != nil && !errors.As(err, &he) && !errors.As(err, &ce) && !errors.Is(err, context.Canceled)
}

// PrecedentQuery asks a hub for precedents: of one project, or of every
// project the token reads (Project "*").
type PrecedentQuery struct {
	Project, Query, Category string
	K                        int
	// Incorrect is surface (default), rank_last, include or exclude.
	Incorrect string
}

// Precedent returns the hub's most similar past decisions, best first.
func (c *Client) Precedent(ctx context.Context, pq PrecedentQuery) ([]hub.PrecedentHit, error) {
	q := url.Values{"project": {pq.Project}, "q": {pq.Query}, "k": {strconv.Itoa(pq.K)}}
	if pq.Category != "" {
		q.Set("category", pq.Category)
	}
	if pq.Incorrect != "" {
		q.Set("incorrect", pq.Incorrect)
	}
	var hits []hub.PrecedentHit
	err := c.Get(ctx, "/api/v1/precedent", q, &hits)
	return hits, err
}
