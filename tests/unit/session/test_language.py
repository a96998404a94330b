"""guardian_proxy/session/language.py: when a sentence is of a language the English NER does not read."""

from guardian_proxy.session.language import other_language


def test_a_sentence_of_another_language_is_told_by_its_function_words():
    assert other_language("Devo chiedere il cambio del medico di base per mia moglie.") == "it"
    assert other_language("Warum heißt der Bodensee auf Englisch so, und stimmt es, dass keine Grenze existiert?") == "de"
    assert other_language("Mi compañero de piso tiene el NIE y tiene que empadronarse.") == "es"
    assert other_language("Please write a card to my host family in Innsbruck, Familie Brandstätter.") == ""
    assert other_language("Hola") == ""  # too short to tell
