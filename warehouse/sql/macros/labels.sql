-- Names for the small integers of the event log (flip7/events.py, flip7/cards.py): event kinds,
-- card labels, how a card was drawn, and a seat's status at round end.
create or replace macro event_kind_name(kind) as
    ['round_start', 'draw', 'hit', 'stay', 'action_played', 'action_deferred', 'action_dropped',
     'freeze', 'sc_kept', 'sc_passed', 'sc_discarded', 'sc_used', 'bust', 'flip7', 'reshuffle',
     'round_score', 'round_end', 'round_cap', 'game_end', 'modifier_given', 'card_moved',
     'card_discarded', 'forced_stay', 'flip7_penalty'][kind + 1];

create or replace macro card_label(card) as
    case
        when card < 0 then null
        when card <= 13 then cast(card as varchar)
        else ['+2', '+4', '+6', '+8', '+10', 'x2', 'Freeze', 'Flip Three', 'Second Chance',
              'Unlucky 7', 'Lucky 13', '/2', '-2', '-4', '-6', '-8', '-10', 'Just One More',
              'Flip Four', 'Steal', 'Swap', 'Discard'][card - 13]
    end;

create or replace macro draw_how_name(how) as
    ['deal', 'hit', 'flip three', 'just one more', 'flip four'][how + 1];

create or replace macro status_name(status) as ['active', 'stayed', 'frozen', 'busted'][status + 1];
