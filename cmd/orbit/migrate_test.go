package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestMigrateStatusAndUp(t *testing.T) {
	p := newProject(t)

	// A project whose index was never created: status creates nothing but
	// an empty file and shows the migration pending.
	res := p.run("migrate", "status")
	if res.code != exitOK {
		t.Fatalf("migrate status: exit %d; stderr %q", res.code, res.stderr)
	}
	if want := "1\t00001_schema.sql\tpending\t\n"; res.stdout != want {
		t.Errorf("migrate status (piped) = %q; want %q", res.stdout, want)
	}
	if want := "index schema v0, binary schema v1\n"; res.stderr != want {
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
	if st.Index != 0 || st.Binary != 1 || len(st.Migrations) != 1 || st.Migrations[0].Applied || st.Migrations[0].Name != "00001_schema.sql" {
		t.Errorf("migrate status --json = %+v; want index 0, binary 1, 00001_schema.sql pending", st)
	}
	if strings.Contains(res.stdout, "applied_at") {
		t.Errorf("migrate status --json shows applied_at for a pending migration:\n%s", res.stdout)
	}
	if res.stderr != "" {
		t.Errorf("migrate status --json stderr = %q; want empty", res.stderr)
	}

	res = p.run("migrate", "up")
	if want := "applied 00001_schema.sql\nindex schema is now v1\n"; res.code != exitOK || res.stdout != want {
		t.Errorf("migrate up = exit %d, %q; want 0, %q (stderr %q)", res.code, res.stdout, want, res.stderr)
	}
	res = p.run("migrate", "up")
	if want := "index schema is current (v1)\n"; res.code != exitOK || res.stdout != want {
		t.Errorf("second migrate up = exit %d, %q; want 0, %q", res.code, res.stdout, want)
	}

	res = p.run("migrate", "status")
	if !regexp.MustCompile(`^1\t00001_schema\.sql\tapplied\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\n$`).MatchString(res.stdout) {
		t.Errorf("migrate status after up = %q; want the migration applied with its time", res.stdout)
	}
	if want := "index schema v1, binary schema v1\n"; res.stderr != want {
		t.Errorf("migrate status stderr = %q; want %q", res.stderr, want)
	}

	res = p.runTTY("migrate", "status")
	for _, want := range []string{"VERSION", "MIGRATION", "STATE", "APPLIED AT", "00001_schema.sql", "applied"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("migrate status on a terminal has no %q:\n%s", want, res.stdout)
		}
	}

	res = p.run("migrate", "status", "--json=binary_version,index_version")
	if got := strings.Join(strings.Fields(res.stdout), ""); got != `{"binary_version":1,"index_version":1}` {
		t.Errorf("migrate status --json=binary_version,index_version = %q", res.stdout)
	}
}

// TestMigrateAfterCommands checks that a normal command leaves the index
// migrated: migrate up has nothing to do.
func TestMigrateAfterCommands(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	p.mustRun("log")
	res := p.mustRun("migrate", "up")
	if want := "index schema is current (v1)\n"; res.stdout != want {
		t.Errorf("migrate up after log = %q; want %q", res.stdout, want)
	}
}
