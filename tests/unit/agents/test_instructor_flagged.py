"""What a record the record model flags is withheld as (`instructor.flagged_types`), and the band of scores the
optional LLM record judge decides (`instructor.judge_band`, around the model's threshold)."""

from guardian_proxy.agents import default_norms
from guardian_proxy.agents.instructor import CONTEXT_TYPE, flagged_types, judge_band


def test_a_flagged_record_is_withheld_as_the_types_the_recipient_may_not_get():
    norms = default_norms()
    diagnosis = norms.classify("Emily told me she was diagnosed with cancer and starts chemotherapy.", persons=1)
    assert "health" in flagged_types(norms, diagnosis, "coworker")


def test_another_persons_flagged_record_is_not_released_by_the_allow_lists():
    """The norms' relationship is the recipient's to the user ("my doctor"), not to the person a record is about: the
    user's own diagnosis goes to the user's doctor, Emily's does not; a room change (about no one) to a coworker
    goes, another person's flight (when the record model flags it) does not."""
    norms = default_norms()
    emily = norms.classify("Emily told me she was diagnosed with cancer and starts chemotherapy.", persons=1)
    assert "health" in flagged_types(norms, emily, "health_care")
    own = norms.classify("I was diagnosed with cancer and I start chemotherapy in March.")
    assert flagged_types(norms, own, "health_care") == []
    room = norms.classify("The design sync moves from room 4B to room 2A on Thursday.")
    assert "schedule" in room.types and flagged_types(norms, room, "coworker") == []
    client = norms.classify("Emily Davis is out on Thursday: she takes the 6 PM flight to Boston.", persons=1)
    assert flagged_types(norms, client, "coworker") == ["schedule"]


def test_a_flagged_record_with_no_listed_type_is_another_persons_context():
    norms = default_norms()
    plain = norms.classify("Mark asked whether the blue folder is still on the shelf.", persons=1)
    assert flagged_types(norms, plain, "coworker") == [CONTEXT_TYPE]


def test_an_impersonal_tool_output_is_nobodys_context_whatever_the_model_scores():
    """Recorded exchanges (a puzzle tool's "Begin with the value 7.", a forecast) carry no person: the guard neither
    withholds them nor adds guidance for them, so an exchange with no personal data leaves as the agent wrote it."""
    norms = default_norms()
    for text in ("Begin with the value 7.", "Sunny, 21 degrees, light wind from the west.", "The next key is 'delta'."):
        c = norms.classify(text)
        assert not c.personal and flagged_types(norms, c, "coworker") == [], text


def test_the_norms_release_own_information_and_allowed_flows():
    norms = default_norms()
    own = norms.classify("I was diagnosed with depression and I take sertraline daily.")
    assert flagged_types(norms, own, "intimate") == [] and "health" in flagged_types(norms, own, "coworker")
    # a room change on a pseudonymised day ("[DATE_1]", as the session stage leaves it) is a schedule: fine to a coworker
    room = norms.classify("The [DATE_1] design sync moves from room 4B to room 2A on the second floor.")
    assert "schedule" in room.types and flagged_types(norms, room, "coworker") == []


def test_a_first_person_message_to_someone_is_not_taken_for_the_users_own_information():
    """A message in the user's inbox is written in its sender's first person: "I" is not provably the user, so the
    `own_data` flows (the user's own information to family) do not release it; a first-person note still goes."""
    norms = default_norms()
    letter = norms.classify("Hey, I really need to talk to someone. I've been struggling with anxiety and I hope you "
                            "can keep this to yourself.")
    assert letter.own and letter.addressed
    assert "health" in flagged_types(norms, letter, "family")
    chat = norms.classify("Can you wait with me for another 15 minutes? I'm running late.")
    assert flagged_types(norms, chat, "intimate") == [CONTEXT_TYPE]  # no listed type: the writer's context
    note = norms.classify("I have been struggling with anxiety and I started therapy last month.")
    assert note.own and not note.addressed and flagged_types(norms, note, "family") == []


def test_a_message_that_opens_with_a_name_is_to_that_person():
    """"John, can we …? I'd like …" is written to John: its "I" is the sender, as with "you"; a sentence adverb before
    the comma ("However, I …") names no one."""
    norms = default_norms()
    for text in ("John, can we talk tonight? I still owe $4,000 on the loan.",
                 "Hey Jane, I've been struggling with anxiety since March.", "Good morning Mark! I got the diagnosis."):
        c = norms.classify(text)
        assert c.own and c.addressed, text
        assert flagged_types(norms, c, "intimate") != [], text
    for text in ("However, I still owe $4,000 on the loan.", "Yesterday, I finished my therapy sessions.",
                 "Hey, I've been struggling with anxiety since March."):
        c = norms.classify(text)
        assert c.own and not c.addressed and flagged_types(norms, c, "intimate") == [], text


def test_the_judge_band_surrounds_the_threshold_within_zero_and_one():
    assert judge_band(0.5) == (0.25, 0.75)
    lo, hi = judge_band(0.1)
    assert lo == 0.0 and abs(hi - 0.35) < 1e-9
    assert judge_band(0.9)[1] == 1.0
