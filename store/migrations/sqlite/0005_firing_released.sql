-- released: the firing's latest attempt was given up by Release, which the
-- scheduler calls only when its action certainly did not reach the desk (a
-- 4xx, a refusal before sending). A pending firing that was not released
-- (its worker crashed, or an answer was lost) may have acted, so it must
-- finish even if the ticket no longer matches its rule; one released with
-- no action done has not begun. A take-over clears it.
ALTER TABLE ledger_firings ADD COLUMN released BOOLEAN NOT NULL DEFAULT FALSE;
