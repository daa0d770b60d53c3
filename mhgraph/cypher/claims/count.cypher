// How many claims corpus $corpus holds.
MATCH (k:Claim {corpus: $corpus})
RETURN count(k) AS claims
