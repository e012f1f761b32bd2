package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/migrations"
)

func TestMigrateStatusAndUp(t *testing.T) {
	p := newProject(t)
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(names) != migrations.Version {
		t.Fatalf("migrations %q, %v; want %d", names, err, migrations.Version)
	}
	v := migrations.Version
	var pending, applied, appliedRE strings.Builder
	for i, n := range names {
		fmt.Fprintf(&pending, "%d\t%s\tpending\t\n", i+1, n)
		fmt.Fprintf(&applied, "applied %s\n", n)
		fmt.Fprintf(&appliedRE, `%d\t%s\tapplied\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\n`, i+1, regexp.QuoteMeta(n))
	}

	// A project whose index was never created: status creates nothing but
	// an empty file and shows the migration pending.
	res := p.run("migrate", "status")
	if res.code != exitOK {
		t.Fatalf("migrate status: exit %d; stderr %q", res.code, res.stderr)
	}
	if want := pending.String(); res.stdout != want {
		t.Errorf("migrate status (piped) = %q; want %q", res.stdout, want)
	}
	if want := fmt.Sprintf("index schema v0, binary schema v%d\n", v); res.stderr != want {
		t.Errorf("migrate status stderr = %q; want %q", res.stderr, want)
	}

	res = p.run("migrate", "status", "--json")
	var st struct {
		Index      int64 `json:"index_version"`
		Binary     int64 `json:"binary_version"`
		Migrations []struct {
			Version   int64  `json:"version"`
			Name      string `json:"name"`
			Applied   bool   `json:"applied"`
			AppliedAt string `json:"applied_at"`
		} `json:"migrations"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &st); err != nil {
		t.Fatalf("migrate status --json does not parse: %v\n%s", err, res.stdout)
	}
	if st.Index != 0 || st.Binary != int64(v) || len(st.Migrations) != v || st.Migrations[0].Applied || st.Migrations[0].Name != "00001_schema.sql" {
		t.Errorf("migrate status --json = %+v; want index 0, binary %d, %q pending", st, v, names)
	}
	if !strings.Contains(res.stdout, `"applied_at": null`) {
		t.Errorf("migrate status --json: applied_at of a pending migration is not null:\n%s", res.stdout)
	}
	if res.stderr != "" {
		t.Errorf("migrate status --json stderr = %q; want empty", res.stderr)
	}

	res = p.run("migrate", "up")
	if want := applied.String() + fmt.Sprintf("index schema is now v%d\n", v); res.code != exitOK || res.stdout != want {
		t.Errorf("migrate up = exit %d, %q; want 0, %q (stderr %q)", res.code, res.stdout, want, res.stderr)
	}
	res = p.run("migrate", "up")
	if want := fmt.Sprintf("index schema is current (v%d)\n", v); res.code != exitOK || res.stdout != want {
		t.Errorf("second migrate up = exit %d, %q; want 0, %q", res.code, res.stdout, want)
	}

	res = p.run("migrate", "status")
	if !regexp.MustCompile(`^` + appliedRE.String() + `$`).MatchString(res.stdout) {
		t.Errorf("migrate status after up = %q; want the migration applied with its time", res.stdout)
	}
	if want := fmt.Sprintf("index schema v%d, binary schema v%d\n", v, v); res.stderr != want {
		t.Errorf("migrate status stderr = %q; want %q", res.stderr, want)
	}

	res = p.runTTY("migrate", "status")
	for _, want := range []string{"VERSION", "MIGRATION", "STATE", "APPLIED AT", "00001_schema.sql", "applied"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("migrate status on a terminal has no %q:\n%s", want, res.stdout)
		}
	}

	res = p.run("migrate", "status", "--json=binary_version,index_version")
	if got, want := strings.Join(strings.Fields(res.stdout), ""), fmt.Sprintf(`{"binary_version":%d,"index_version":%d}`, v, v); got != want {
		t.Errorf("migrate status --json=binary_version,index_version = %q", res.stdout)
	}
}

// TestMigrateAfterCommands checks that a normal command leaves the index
// migrated: migrate up has nothing to do.
func TestMigrateAfterCommands(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("log")
	res := p.mustRun("migrate", "up")
	if want := fmt.Sprintf("index schema is current (v%d)\n", migrations.Version); res.stdout != want {
		t.Errorf("migrate up after log = %q; want %q", res.stdout, want)
	}
}
