package reports

import (
	"encoding/csv"
	"io"
	"strconv"
)

// ComparisonColumns are comparison.csv's header: one row per design.
var ComparisonColumns = []string{"design", "requests_completed", "ttft_ms_mean", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99",
	"tpot_ms_p50", "tpot_ms_p99", "e2e_ms_p50", "throughput_tokens_per_s", "hit_ratio_tokens",
	"prefill_tokens_computed", "prefill_tokens_reused", "storage_write_bytes", "storage_read_bytes", "sim_time_s",
	"resumed_ttft_ms_p50", "resumed_ttft_ms_p99", "kv_wait_ms_p50", "delivered_share", "saturated",
	"sustained_output_tokens_per_s", "sustained_drive_writes_per_day"}

// ComparisonRow is a summary's comparison.csv row.
func ComparisonRow(s *Summary) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{s.Design, i(int64(s.RequestsCompleted)), f(s.TTFTms.Mean), f(s.TTFTms.P50), f(s.TTFTms.P90), f(s.TTFTms.P99),
		f(s.TPOTms.P50), f(s.TPOTms.P99), f(s.E2Ems.P50), f(s.ThroughputTokensPerS), f(s.HitRatioTokens),
		i(s.PrefillTokensComputed), i(s.PrefillTokensReused), i(s.Bytes["storage_write"]), i(s.Bytes["storage_read"]), f(s.SimTimeS),
		f(s.ResumedTTFTms.P50), f(s.ResumedTTFTms.P99), f(s.KVWaitMs.P50), deliveredShare(&s.Load), strconv.FormatBool(s.Saturated),
		f(s.SustainedOutputTokensPerS), f(sustainedDriveWrites(s))}
}

// sustainedDriveWrites is the busiest drive tier's sustained drive writes
// per day (0 without drives).
func sustainedDriveWrites(s *Summary) float64 {
	most := 0.0
	for _, t := range s.Tiers {
		most = max(most, t.SustainedDriveWritesPerDay)
	}
	return most
}

// deliveredShare is the share as a number, or empty for a run not judged.
func deliveredShare(l *Load) string {
	if !l.Judged {
		return ""
	}
	return strconv.FormatFloat(l.DeliveredShare, 'f', 6, 64)
}

// WriteComparisonCSV writes one row per summary, with the header.
func WriteComparisonCSV(w io.Writer, sums []Summary) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ComparisonColumns); err != nil {
		return err
	}
	for i := range sums {
		if err := cw.Write(ComparisonRow(&sums[i])); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
