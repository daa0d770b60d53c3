// Constraints and indexes for evaluation traces.
CREATE CONSTRAINT eval_run_id IF NOT EXISTS FOR (r:EvalRun) REQUIRE r.id IS UNIQUE;
CREATE CONSTRAINT question_id IF NOT EXISTS FOR (q:Question) REQUIRE q.id IS UNIQUE;
CREATE INDEX retrieved_run IF NOT EXISTS FOR ()-[r:RETRIEVED]-() ON (r.run);
CREATE INDEX led_to_run IF NOT EXISTS FOR ()-[r:LED_TO]-() ON (r.run);
CREATE INDEX step_run IF NOT EXISTS FOR (s:Step) ON (s.run, s.question);
CREATE INDEX used_claim_run IF NOT EXISTS FOR ()-[r:USED_CLAIM]-() ON (r.run);
CREATE INDEX seed_fact_run IF NOT EXISTS FOR ()-[r:SEED_FACT]-() ON (r.run);
CREATE INDEX walked_run IF NOT EXISTS FOR ()-[r:WALKED]-() ON (r.run);
