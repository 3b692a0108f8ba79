package indexers

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	cron "github.com/netresearch/go-cron"
)

// Cron schedule functions, for CronJobs' spec.schedule in the standard
// five-field form (with the descriptors @hourly, @daily, …, and a leading
// CRON_TZ=ZONE), as kube-state-metrics reads them:
//
//	isCronSchedule("*/5 * * * *") == true
//	isCronSchedule("61 * * * *") == false
//	cronNext("0 3 * * *", timestamp("2026-11-25T10:00:00Z")) == timestamp("2026-11-26T03:00:00Z")
//	cronNext("CRON_TZ=Europe/Paris 0 3 * * *", t)   // 03:00 in Paris
//
// cronNext of a schedule that does not parse is an error; of one that
// never fires (February 30), Go's zero time. A zone is looked up as
// time.LoadLocation looks it up; the command embeds Go's copy of the time
// zone database, so that zones resolve on a host without one.
const (
	isCronScheduleOverload = "is_cron_schedule_string"
	cronNextOverload       = "cron_next_string_timestamp"
)

// cronFunctions declares isCronSchedule() and cronNext().
func cronFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Function("isCronSchedule",
			cel.Overload(isCronScheduleOverload, []*cel.Type{cel.StringType}, cel.BoolType,
				cel.UnaryBinding(unaryOf(func(s types.String) ref.Val {
					_, err := cron.ParseStandard(string(s))
					return types.Bool(err == nil)
				})))),
		cel.Function("cronNext",
			cel.Overload(cronNextOverload, []*cel.Type{cel.StringType, cel.TimestampType}, cel.TimestampType,
				cel.BinaryBinding(func(schedule, after ref.Val) ref.Val {
					s, ok := schedule.(types.String)
					if !ok {
						return types.MaybeNoSuchOverloadErr(schedule)
					}
					t, ok := after.(types.Timestamp)
					if !ok {
						return types.MaybeNoSuchOverloadErr(after)
					}
					sched, err := cron.ParseStandard(string(s))
					if err != nil {
						return types.NewErr("cronNext: %v", err)
					}
					return types.Timestamp{Time: sched.Next(t.Time).UTC()}
				}))),
	}
}
