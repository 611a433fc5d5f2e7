package sql

import (
	"context"
	"testing"
)

func TestRetargetTrigger(t *testing.T) {
	cases := []struct {
		create, sqlMode, db, table, want string
	}{
		{
			create: "CREATE TRIGGER tr AFTER UPDATE ON t1 FOR EACH ROW BEGIN END",
			table:  "t2",
			want:   "CREATE TRIGGER tr AFTER UPDATE ON `t2` FOR EACH ROW BEGIN END",
		},
		{
			// The qualifier stays; the body's own "on t1" is not touched.
			create: "create trigger tr before delete on `d` . `t 1` for each row delete from t1 where t1.a in (select a from t1 join t3 on t1.a = t3.a)",
			table:  "new`name",
			want:   "create trigger tr before delete on `d` . `new``name` for each row delete from t1 where t1.a in (select a from t1 join t3 on t1.a = t3.a)",
		},
		{
			// A definer and a trigger name that look like the keyword.
			create: "CREATE DEFINER = 'on'@'%' TRIGGER `on` BEFORE INSERT ON x FOR EACH ROW SET NEW.a = 1",
			db:     "d",
			table:  "x",
			want:   "CREATE DEFINER = 'on'@'%' TRIGGER `on` BEFORE INSERT ON `d`.`x` FOR EACH ROW SET NEW.a = 1",
		},
		{
			create: "CREATE TRIGGER tr BEFORE INSERT ON old.t FOR EACH ROW FOLLOWS other SET NEW.a = 1",
			db:     "d",
			table:  "t",
			want:   "CREATE TRIGGER tr BEFORE INSERT ON `d`.`t` FOR EACH ROW FOLLOWS other SET NEW.a = 1",
		},
		{
			create:  `CREATE TRIGGER tr BEFORE INSERT ON "t" FOR EACH ROW SET NEW."a" = 1`,
			sqlMode: "ANSI_QUOTES",
			table:   "u",
			want:    "CREATE TRIGGER tr BEFORE INSERT ON `u` FOR EACH ROW SET NEW.\"a\" = 1",
		},
	}
	for _, c := range cases {
		got, err := retargetTrigger(c.create, c.sqlMode, c.db, c.table)
		if err != nil || got != c.want {
			t.Errorf("retargetTrigger(%q, %q, %q):\n got %q, %v\nwant %q", c.create, c.db, c.table, got, err, c.want)
			continue
		}
		if spec, err := parseTrigger(context.Background(), got, c.sqlMode); err != nil || spec.table != c.table {
			t.Errorf("%q is on %q (%v), want %q", got, spec.table, err, c.table)
		}
	}
	for _, bad := range []string{"CREATE TABLE t (a INT)", "CREATE TRIGGER tr BEFORE INSERT ON", ""} {
		if got, err := retargetTrigger(bad, "", "", "t"); err == nil {
			t.Errorf("retargetTrigger(%q) = %q, want an error", bad, got)
		}
	}
}
