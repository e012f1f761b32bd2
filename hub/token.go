package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/orbit-loop/orbit/project"
)

// Scopes of a project token.
const (
	// ScopePush pushes the project's journals, and reads the project.
	ScopePush = "push"
	// ScopeRead reads the project (or, for project "*", every project).
	ScopeRead = "read"
)

// AllProjects, as a token's project or a query's, means every project.
const AllProjects = "*"

// Access is what a request's token lets it do.
type Access struct {
	// Admin is the hub's own token (`orbit serve --token`): every project,
	// push and read.
	Admin bool
	// Project is the token's project, or AllProjects; Scope its scope.
	Project string
	Scope   string
}

// CanRead reports whether the access reads project (AllProjects: every one).
func (a Access) CanRead(projectID string) bool {
	return a.Admin || a.Project == AllProjects || (projectID != AllProjects && a.Project == projectID)
}

// CanPush reports whether the access pushes project's journals.
func (a Access) CanPush(projectID string) bool {
	return a.Admin || (a.Scope == ScopePush && a.Project == projectID)
}

// TokenBytes is the entropy of a token orbit makes: 192 bits.
const TokenBytes = 24

// NewToken returns a random token.
func NewToken() (string, error) {
	b := make([]byte, TokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a token for project (AllProjects for a read token over
// every project) with scope, stores its hash, and returns the token: it is
// shown once and never stored.
func (s *Store) CreateToken(ctx context.Context, projectID, scope, note string, now time.Time) (string, error) {
	if scope != ScopePush && scope != ScopeRead {
		return "", fmt.Errorf("--scope %q: want push or read", scope)
	}
	if projectID == AllProjects {
		if scope != ScopeRead {
			return "", errors.New("--project '*' goes with --scope read: a push token is for one project")
		}
	} else if err := project.CheckID(projectID); err != nil {
		return "", fmt.Errorf("--project: %w", err)
	}
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	_, err = s.DB.ExecContext(ctx, s.q(`INSERT INTO hub_tokens (hash, project_id, scope, created_at, note) VALUES (?, ?, ?, ?, ?)`),
		hashToken(tok), projectID, scope, now.UTC().Format(time.RFC3339), note)
	if err != nil {
		return "", fmt.Errorf("store token: %w", err)
	}
	return tok, nil
}

// TokenInfo describes a stored token (never the token itself).
type TokenInfo struct {
	ID        string `db:"id" json:"id"`
	Project   string `db:"project_id" json:"project"`
	Scope     string `db:"scope" json:"scope"`
	CreatedAt string `db:"created_at" json:"created_at"`
	Note      string `db:"note" json:"note"`
}

// tokenIDLen is how much of a token's hash names it in lists and revoke.
const tokenIDLen = 12

// Tokens lists the stored tokens, each named by the start of its hash.
func (s *Store) Tokens(ctx context.Context) ([]TokenInfo, error) {
	var out []TokenInfo
	err := s.DB.SelectContext(ctx, &out, `SELECT substr(hash, 1, 12) AS id, project_id, scope, created_at, note FROM hub_tokens ORDER BY created_at, hash`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken deletes the token whose hash starts with id (as Tokens names
// it). It reports false when none does.
func (s *Store) RevokeToken(ctx context.Context, id string) (bool, error) {
	if len(id) != tokenIDLen {
		return false, fmt.Errorf("token id %q: want the %d characters `orbit serve token list` shows", id, tokenIDLen)
	}
	res, err := s.DB.ExecContext(ctx, s.q(`DELETE FROM hub_tokens WHERE substr(hash, 1, 12) = ?`), id)
	if err != nil {
		return false, fmt.Errorf("revoke token: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Authenticate returns what token may do: admin when it is the hub's own
// token, else the stored token's project and scope. ok is false for an
// unknown token.
func (s *Store) Authenticate(ctx context.Context, token, admin string) (a Access, ok bool, err error) {
	if token == "" {
		return Access{}, false, nil
	}
	if admin != "" && subtle.ConstantTimeCompare([]byte(token), []byte(admin)) == 1 {
		return Access{Admin: true, Project: AllProjects, Scope: ScopePush}, true, nil
	}
	// Looked up by hash: the stored value is not the secret, so comparing
	// it in the database reveals nothing.
	var row struct {
		Project string `db:"project_id"`
		Scope   string `db:"scope"`
	}
	err = s.DB.GetContext(ctx, &row, s.q(`SELECT project_id, scope FROM hub_tokens WHERE hash = ?`), hashToken(token))
	if isNoRows(err) {
		return Access{}, false, nil
	}
	if err != nil {
		return Access{}, false, fmt.Errorf("check token: %w", err)
	}
	return Access{Project: row.Project, Scope: row.Scope}, true, nil
}
