// Every stored evaluation run, newest first. A stale run retrieved documents that were replaced or
// deleted since (their keys in `changed`); its traces still reach the old chunks, labelled Retired.
MATCH (r:EvalRun)
RETURN r.id AS run, r.method AS method, r.corpus AS corpus, r.started_at AS started, r.questions AS questions,
       r.hits_at_10 AS `Hits@10`, r.mrr_at_10 AS `MRR@10`, coalesce(r.stale, false) AS stale,
       r.stale_keys AS changed
ORDER BY started DESC
