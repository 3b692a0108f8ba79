package memcg

import "testing"

func TestField(t *testing.T) {
	// As Linux 5.x writes them.
	const oomControl = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"
	const events = "low 0\nhigh 0\nmax 17\noom 1\noom_kill 1\noom_group_kill 0\n"
	for _, tc := range []struct {
		content, name string
		want          int64
		err           bool
	}{
		{oomControl, "oom_kill", 2, false},
		{oomControl, "under_oom", 0, false},
		{events, "oom_kill", 1, false},
		{events, "max", 17, false},
		// oom_kill_disable is not oom_kill.
		{"oom_kill_disable 0\nunder_oom 0\n", "oom_kill", 0, true},
	} {
		got, err := Field(tc.content, tc.name)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("Field(%q, %q) = %d, %v; want %d, error %v", tc.content, tc.name, got, err, tc.want, tc.err)
		}
	}
}
