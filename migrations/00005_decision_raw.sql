-- Schema v5: a decision's raw text is kept only when it differs from its
-- canonical form. The decisions table holds every field of a record, so a
-- line written as orbit writes it (its fields in seed 000's order, compact,
-- the optional ones present only when set) is the fields again: raw was half
-- of a 1M-decision index (414 MB of 990). raw = '' now means "the canonical
-- form of this row's fields" (db.DecisionRawSQL renders it, byte for byte as
-- the row was checked against when it was indexed); any other line (another
-- field order, spacing, escapes, unknown fields, several lines) keeps its
-- exact text. No record's text is empty, so '' is free for the purpose.

-- +goose Up
-- Rows already indexed whose raw is their canonical form drop it (the space
-- is reused by later rows; `orbit rebuild` makes a compact file).
UPDATE decisions SET raw = '' WHERE raw = '{"id":' || json_quote(id) || ',"iteration":' || iteration || ',"ts":' || json_quote(ts)
    || ',"tier":' || json_quote(tier) || ',"depth":' || json_quote(depth) || ',"category":' || json_quote(category)
    || ',"input":' || json_quote(input) || ',"decision":' || json_quote(decision) || ',"reason":' || json_quote(reason)
    || ',"next_action":' || json_quote(next_action) || ',"verification":' || json_quote(verification)
    || ',"retrograde":{"previous_id":' || json_quote(retro_prev_id) || ',"outcome":' || json_quote(retro_outcome) || '}'
    || iif(confidence IS NULL, '', ',"confidence":' || iif(confidence = CAST(confidence AS INTEGER), CAST(confidence AS INTEGER), json_quote(confidence)))
    || iif(requestor = '', '', ',"requestor":' || json_quote(requestor))
    || iif(context = '', '', ',"context":' || json_quote(context))
    || iif(request_id = '', '', ',"request_id":' || json_quote(request_id)) || '}';

-- +goose Down
UPDATE decisions SET raw = '{"id":' || json_quote(id) || ',"iteration":' || iteration || ',"ts":' || json_quote(ts)
    || ',"tier":' || json_quote(tier) || ',"depth":' || json_quote(depth) || ',"category":' || json_quote(category)
    || ',"input":' || json_quote(input) || ',"decision":' || json_quote(decision) || ',"reason":' || json_quote(reason)
    || ',"next_action":' || json_quote(next_action) || ',"verification":' || json_quote(verification)
    || ',"retrograde":{"previous_id":' || json_quote(retro_prev_id) || ',"outcome":' || json_quote(retro_outcome) || '}'
    || iif(confidence IS NULL, '', ',"confidence":' || iif(confidence = CAST(confidence AS INTEGER), CAST(confidence AS INTEGER), json_quote(confidence)))
    || iif(requestor = '', '', ',"requestor":' || json_quote(requestor))
    || iif(context = '', '', ',"context":' || json_quote(context))
    || iif(request_id = '', '', ',"request_id":' || json_quote(request_id)) || '}'
WHERE raw = '';
