"""What the words around a name say it is, for the chat session's rules (`session/context.py`): an ordinary word,
a product, a work or its maker, a public life asked about, or a person's name that NER typed as something else.

Each rule reads the few words next to the name, never a list of famous people or products: a software noun or a
version after it ("my Django app"), "… by" after a work ("Pride and Prejudice by Jane Austen"), "a biography of …",
"my name is …", a kinship noun ("my daughter …"). Every pattern starts where its cue starts, so none is tried from
every position of a long run of spaces (tests/unit/extract/test_extract_redos.py holds them to linear time).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..occupations import OCCUPATIONS
from ..person_names import WORLD, faker_names
from ..public_orgs import public_org
from ..recognizer_data import data as recognizer_data
from .language import other_language
from .surrogates import MEN_TITLES, PARTICLES, TITLES, WOMEN_TITLES

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")

#: nouns and verbs that name a person or a person's life in the sentence ("the patient was admitted on …",
#: "born in …", "my son's school in …"): they tie a place or date to someone too
PERSON_WORDS = frozenset({"patient", "patients", "client", "customer", "employee", "applicant", "candidate", "tenant",
                          "resident", "member", "student", "pupil", "child", "children", "son", "daughter", "wife",
                          "husband", "mother", "father", "mom", "mum", "dad", "parent", "parents", "brother",
                          "sister", "friend", "colleague", "coworker", "boss", "manager", "neighbor", "neighbour",
                          "partner", "boyfriend", "girlfriend", "fiancé", "fiance", "kid", "kids", "family", "baby",
                          "grandmother", "grandfather", "born", "birthday", "lives", "lived", "resides", "married",
                          "divorced", "admitted", "discharged", "diagnosed", "hired", "fired", "arrested", "died",
                          "address", "home", "user's", "customer's", "patient's"})
_POSSESSIVES = frozenset({"my", "our", "his", "her", "their", "your", "mine", "ours", "hers", "theirs", "yours"})

#: what follows a product's name and never a person's (no possessive between): a version ("Django v4", "Django
#: 4.2.1"), a software noun ("my Django app", "the Flask server"; nouns only, never a word that is also a verb of a
#: person: "John logs in", "let Tom build it"); after a possessive, a code word ("Docker's COPY", "React's useEffect")
#: what a programming language or a runtime has and a person has not: "Kotlin's coroutine scope", "Rust's borrow
#: checker", "Python's GIL" (capitals are a code word already)
_LANGUAGE_PARTS = (r"(?i:coroutines?|goroutines?|traits?|structs?|macros?|generics|decorators|closures|lifetimes|"
                   r"borrow\s+checker|garbage\s+collector|type\s+system|standard\s+library|stdlib|event\s+loop|"
                   r"runtime|compiler|interpreter|bytecode|syntax)\b")
_PRODUCT_AFTER = re.compile(
    r"^[ \t]+(?:v\d+(?:\.\d+)*\b|\d+\.\d+\.\d+\b|\d+\.x\b|(?i:app|apps|application|applications|project|projects|"
    r"server|servers|container|containers|image|images|cluster|clusters|api|apis|sdk|sdks|cli|library|libraries|"
    r"framework|plugin|plugins|package|packages|module|modules|database|databases|backend|frontend|template|"
    r"templates|migration|migrations|settings|config|configuration|docs|documentation|installation|deployment|"
    r"component|components|extension|extensions|runtime|engine|website|repo|repository|instance|instances|pod|pods|"
    r"workflow|workflows|codebase|orm|daemon|syntax|middleware|endpoint|endpoints|tutorial|tutorials|integration|"
    r"firmware|binary|notebook|notebooks|dashboard|toolkit|toolchain|compiler|interpreter|dependency|dependencies|"
    r"exception|exceptions|schema|schemas|controller|controllers|widget|widgets|message|messages|post|posts|profile|"
    r"profiles|channel|channels|feed|inbox|notifications|listing|listings|ads|task|tasks|job|jobs|pipeline|pipelines|"
    r"error|errors|warning|warnings|wrapper|script|scripts|release|releases|cache|registry|index|consumer|consumers|"
    r"producer|producers|topic|topics|broker|brokers|partition|partitions|coroutine|coroutines|kernel|bytecode|"
    r"dataframe|dataframes|cmdlet|cmdlets|manifest|manifests|workspace|workspaces|org|orgs|tenant|account|"
    r"client|clients|export|exports|result|results|query|queries|webhook|webhooks|event|events|report|reports|"
    r"console|portal|admin|sandbox|environment|subscription|plan)\b)"
    r"|^['’]s\s+(?:[A-Z]{2,}\b|[a-z]+[A-Z]\w*|\w+\(|\w*_\w+)")
_LANGUAGE_OWNS = re.compile(r"['’]s\s+" + _LANGUAGE_PARTS)
#: verbs that take a person and then a thing ("send John the docs", "give Anna access"): a noun after the name is
#: the thing given, the name stays a person's
_TWO_OBJECTS = re.compile(r"\b(?:send|sent|give|gave|given|show|showed|shown|email|e-mail|emailed|forward|forwarded|"
                          r"mail|mailed|text|texted|message|messaged|pass|passed|hand|handed|bring|brought|offer|"
                          r"offered|grant|granted|teach|taught|tell|told|ask|asked|lend|lent|sell|sold|pay|paid|owe|"
                          r"get|got|buy|bought|make|made|write|wrote|assign|assigned|ping|pinged|cc|bcc|let)"
                          r"\s+(?:[\w'’]+\s+){0,1}$", re.I)
#: a work and its maker: "Pride and Prejudice by Jane Austen", "a novel by …", "a song written by …", "painted by …"
#: (the sentence must tie no one of the conversation to the name: "a poem by my aunt Jane" is the user's family).
#: Workplace papers ("the Q3 Report by Jane", "a memo written by …") are someone's work, not a published one.
_WORK = r"(?:book|books|novel|novels|poem|poems|poetry|play|plays|song|songs|album|albums|film|films|movie|movies|" \
        r"painting|paintings|essay|essays|paper|papers|article|articles|speech|speeches|lecture|lectures|symphony|" \
        r"opera|sonata|concerto|series|story|stories|biography|memoir|sculpture|theory|theorem|sitcom|comic|" \
        r"comics|manga|trilogy|saga|sonnet|sonnets|ballad|hymn|musical|documentary|podcast|lyrics|masterpiece|" \
        r"bestseller|textbook)"
#: what is asked about a public life: "a biography of Marie Curie", "the paintings of …", "who was …"
_PUBLIC_BEFORE = re.compile(r"\b(?:biography|biographies|life|legacy|reign|presidency|assassination|paintings|poems|"
                            r"plot|synopsis|ending|themes|sequel|"
                            r"novels|songs|symphonies|quotes|speeches|theories|discoveries|inventions|philosophy)\s+of"
                            r"\s+$|\bwho\s+was\s+$", re.I)
#: what follows a public life's name: a contribution to a field, an invention ("What did Ada Lovelace contribute to
#: computing?", "Tesla invented …", "Euler's theorem", "Newton's contributions to optics")
_PUBLIC_AFTER = re.compile(r"^(?:\s+(?:invented|invent|pioneered|pioneer|contributed|contribute)\b|['’]s\s+[«\"“]|['’]s\s+(?:"
                           r"contributions?|theorem|theorems|legacy|inventions?|discoveries|symphonies|philosophy|"
                           r"scientific|famous|greatest|best-known)\b|(?:['’]s)?\s+(?-i:[A-Z][\w-]{1,30}\s+)?(?:"
                           r"books|novels|trilogy|saga|films|movies|albums|discography|filmography)\b)", re.I)
#: from a name to the "by" of its work's maker: "Dune by ", "Harry Potter and the Philosopher's Stone by "
#: (not after a verb that hands something to the name: "Email John Smith the Q3 Report by Dana"); it starts after a
#: name's last letter, so a run of spaces is not tried from every position
_TITLE_TO_BY = re.compile(r"(?<=\w)(?:(?:['’]s|\s+(?:and|of|in|on|&))(?:\s+(?:and|of|the|in|on|a|an|&|[A-Z][\w'’:-]*|\d+))"
                          r"{0,8}?)?\s+by\s+")
#: capitalised words that end a workplace paper's or a calendar's name: "due Monday by John", "the Q3 Report by Jane"
_NOT_TITLE = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|" \
             r"July|August|September|October|November|December|Today|Tomorrow|Tonight|Noon|Midnight|Christmas|" \
             r"Easter|Report|Reports|Memo|Proposal|Plan|Notes|Minutes|Spreadsheet|Deck|Presentation|Summary|Review|" \
             r"Budget|Draft|Doc|Document|Email|E-mail|Letter|Invoice|Contract|Update|Analysis|Brief|Agenda|Ticket|" \
             r"Issue|Request|Feedback|Form|Application|Assignment|Homework|Thesis|Submission)"
_NOT_TITLE_WORD = re.compile(r"\b" + _NOT_TITLE + r"\b")
_AUTHORED = re.compile(r"(?:\b" + _WORK + r"(?:\s+(?:written|composed|directed|performed|sung|recorded|painted|"
                       r"illustrated|narrated|produced))?|\b(?:authored|composed|painted|directed|sung|illustrated|"
                       r"narrated|choreographed|sculpted|starring|coined|invented|discovered)"
                       r"|(?<=[a-z\d)\];:,])\s+(?!" + _NOT_TITLE + r"\b)[A-Z][a-z][\w'’:-]*|[\"”’*_])\s+by\s+$"
                       # a work and its maker in other languages: "il romanzo «Il Gattopardo» di …", "il film di …",
                       # "la novela de …", "le roman de …", "der Roman von …", "powieść …"
                       r"|\b(?:romanzo|film|libro|opera|canzone|album|novela|película|pelicula|canción|cancion|roman|"
                       r"livre|chanson|Roman|Buch|Lied|Gemälde|boek|powieść|książka|obra|filme|quadro|tableau)"
                       r"(?:\s+[«\"“][^»\"”\n]{1,60}[»\"”])?\s+(?:di|de|del|du|von|van|door|przez|da|do)\s+$")



def given_and_surnames() -> frozenset[str]:
    """Given names and surnames of several languages: a word in this list may be a name even when it is an
    ordinary word ("Mark", "Grace", "Rose")."""
    return faker_names("first_names", "first_names_male", "first_names_female", "last_names")


def listed_name(word: str) -> bool:
    """Whether one of the name lists holds `word` (a possessive left out) as a given name or a surname, in any of
    the world's locales Faker has."""
    key = re.sub(r"['’]s$", "", word.strip()).casefold()
    return key in given_and_surnames() or key in world_given_names() or key in _SHORT_NAMES or \
        key in faker_names("last_names", locales=WORLD)


#: short given names Faker's lists lack that are also ordinary words
_SHORT_NAMES = frozenset({"pat", "ruby", "kit", "ken", "sam", "max", "ben", "dan", "tom", "ted", "ed", "al", "sal"})



@lru_cache(maxsize=65536)
def _zipf(word: str) -> float:
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # pragma: no cover
        return 0.0
    return zipf_frequency(word, "en")


def rare_in_lower(word: str) -> bool:
    """Whether a name written in lower case is still most likely the name: a word English text seldom uses (Zipf
    < 3.7: "eilidh" 1.9, "nadia" 3.3, "raj" 3.55), not one it often does ("mark" 5.1, "dev" 3.76, "leo" 4.2)."""
    return _zipf(word.casefold()) < 3.7


#: a public office or rank before a name, its place perhaps before or after it: "Prime Minister Keir Starmer", "Mayor
#: of London Sadiq Khan", "Warsaw mayor Rafał Trzaskowski", "Oslo's mayor Anne Lindboe", "Pope Clement VII", "the Health
#: Secretary Wes Streeting", "Dame Jacqueline Wilson"
_OFFICE = (r"(?:[Pp]rime[ \t]+[Mm]inister|(?:[Vv]ice[- ])?[Pp]resident|[Cc]hancellor|[Ss]enator|[Gg]overnor|"
           r"[Cc]ongress(?:man|woman)|[Mm]inister|[Ss]ecretary|[Mm]ayor|[Pp]remier|Taoiseach|MP|MEP|King|Queen|Prince|"
           r"Princess|Pope|Saint|St\.?|Sir|Dame|Emperor|Empress|Tsar|Czar|Sultan|Archbishop|Cardinal|"
           r"Chief[ \t]+Justice)")
#: the office alone, capitalised as a title is ("President Macron"; "the society secretary Mr. …" is a club's)
_OFFICE_TITLE = re.sub(r"\[([A-Z])[a-z]\]", r"\1", _OFFICE)
_PUBLIC_OFFICE_BEFORE = re.compile(r"(?:\b" + _OFFICE_TITLE + r"(?:[ \t]+of(?:[ \t]+the)?(?:[ \t]+[A-Z][\w'’-]{1,20}){1,3})?|"
                                   r"\b[A-Z][\w'’-]{1,20}(?:['’]s)?[ \t]+(?:[A-Z][a-z]{2,20}[ \t]+)?" + _OFFICE + r")"
                                   r",?[ \t]{1,2}$")
#: a company's officer's title right before a name ("Nvidia CFO …", "led by CEO and MD …"): public when the sentence
#: names a well-known company before it (`public_orgs`)
_EXEC_BEFORE = re.compile(r"\b(?:CEO|CFO|COO|CTO|[Cc]hief[ \t]+[Ee]xecutive|[Ff]ounder|[Cc]o-founder|[Cc]hair(?:man|woman)?)"
                          r"(?:[ \t]+and[ \t]+(?:MD|CEO|[Cc]hair(?:man|woman)?|[Pp]resident))?,?[ \t]{1,2}$")
_CAPITAL_RUN = re.compile(r"[A-Z][\w&'’.-]{1,30}(?:[ \t][A-Z][\w&'’.-]{1,30}){0,3}")
#: a public office after the name: "Tim Cook as CEO of Apple", "Satya Nadella, Microsoft's chief executive", "Amy
#: Hood, the company's chief financial officer"
_PUBLIC_OFFICE_AFTER = re.compile(r"(?:,[ \t]{1,2}|[ \t]{1,2}as[ \t]{1,2})(?:the[ \t]{1,2})?(?:[A-Z][\w&'’-]{1,20}['’]s[ \t]{1,2}|"
                                  r"company['’]s[ \t]{1,2})?(?:CEO|CFO|COO|CTO|(?i:chief[ \t]+(?:\w{3,12}[ \t]+)?(?:executive|"
                                  r"officer)|founder|co-founder|chair(?:man|woman)?|president|prime[ \t]+minister|"
                                  r"chancellor|mayor|governor|senator|minister|secretary))[ \t]{1,2}of[ \t]{1,2}[A-Z]|"
                                  r",[ \t]{1,2}(?:the[ \t]{1,2})?(?:[A-Z][\w&'’-]{1,20}['’]s|company['’]s)[ \t]{1,2}"
                                  r"(?:CEO|CFO|chief[ \t]+(?:\w{3,12}[ \t]+)?(?:executive|officer)|founder|chair(?:man|woman)?|"
                                  r"president)\b")
#: a king's, a queen's or a pope's number after the name ("Henry VIII", "Clement VII", "Elizabeth II")
_REGNAL = r"(?:II|III|IV|VI{0,3}|IX|XI{0,3}|XIV|XV|XVI{1,3}|XIX|XX)"  # not "I": "the guy, Darren I think"
_REGNAL_AFTER = re.compile(r"[ \t]" + _REGNAL + r"\b(?!\.)")


def public_office(text: str, h) -> bool:
    """A name after a public office or rank ("Prime Minister Keir Starmer", "Mayor of London Sadiq Khan", "Oslo's
    mayor Anne Lindboe", "Pope Clement VII", "Sir …", "Dame …"), with a king's or a pope's number ("Henry VIII"), or
    before a company's or a country's office ("Tim Cook as CEO of Apple", "Satya Nadella, Microsoft's chief executive"):
    a public person, whose stand-in would make the text about someone else. Not after "my", "our", "his" … ("our
    mayor"): an office the writer holds close may be anyone's."""
    e = _EXEC_BEFORE.search(text, max(0, h.start - 40), h.start)
    if e and any(public_org(r.group(0)) for r in  # the sentence so far names a well-known company
                 _CAPITAL_RUN.finditer(text, max(_sentence_begin(text, e.start()), e.start() - 150), e.start())):
        return True  # "Nvidia CFO Colette Kress", "Tata Consultancy Services, led by CEO and MD K. Krithivasan": a
        # well-known company's officer is a public figure (not "Acme's CEO Jo Parkes": a company no list holds)
    m = _PUBLIC_OFFICE_BEFORE.search(text, max(0, h.start - 60), h.start)
    if m and not re.search(r"\b(?:my|our|his|her|their|your)(?:[ \t]+[\w'’-]{1,20}){0,2}[ \t]+$",
                           text[max(0, m.start() - 50):m.start()], re.I):
        return True
    return bool(re.fullmatch(r".+[ \t]" + _REGNAL, h.text)) or \
        bool(_REGNAL_AFTER.match(text, h.end)) or bool(_PUBLIC_OFFICE_AFTER.match(text, h.end))


#: given names that are also common English words: in lower case they may be the word ("my friend mark said", "my
#: boss will", "the dev server")
WORD_NAMES = frozenset({
    "mark", "will", "rose", "grace", "hope", "faith", "joy", "bill", "pat", "sue", "sunny", "dawn", "april", "may",
    "june", "ruby", "amber", "jade", "iris", "lily", "daisy", "holly", "ivy", "max", "ray", "art", "frank", "jack",
    "guy", "drew", "bob", "rob", "sandy", "summer", "autumn", "chase", "chip", "hunter", "page", "skip", "dev", "don",
    "gene", "earl", "dean", "rich", "ken", "kit", "sam", "tom", "ted", "ben", "dan", "al", "ed", "bo", "jan", "eve",
    "angel", "august", "bay", "blue", "brook", "cash", "clay", "cliff", "colt", "crystal", "destiny", "ginger",
    "glen", "gray", "grey", "harmony", "heather", "honey", "jewel", "king", "lane", "lee", "love", "mason", "miles",
    "misty", "neil", "noel", "olive", "pearl", "penny", "poppy", "reed", "rocky", "sage", "scott", "sky", "star",
    "stone", "storm", "victor", "violet", "wade", "warren", "wood", "young", "rain", "river", "major",
    "precious", "comfort", "blessing", "patience", "charity", "prudence", "constance", "mercy", "honor", "honour"})


#: the kinship and role nouns that say a name after them is of someone the user knows
_KIN_NOUNS = (r"daughter|son|wife|husband|mother|father|mom|mum|dad|brother|sister|friend|colleague|coworker|boss|"
              r"manager|neighbou?rs?|partner|boyfriend|girlfriend|fianc[ée]e?|cousin|aunt|uncle|niece|nephew|"
              r"grandmother|grandfather|grandson|granddaughter|landlord|landlady|tenant|teacher|student|doctor|patient|"
              r"client|roommate|flatmate|parent|children|kids|sibling|grandparent|grandchild|grandchildren|"
              r"stepmother|stepfather|stepson|stepdaughter|twin|mate|office\s+mate|housemate|classmate|supervisor|"
              r"in-law|nan|nana|nanna|gran|granny|grandma|grandmum|grandad|granddad|grandpa|girls|boys|bride|groom|"
              r"lola|lolo|ninang|ninong|godmother|godfather|godson|goddaughter|"
              r"ex|exes|crush|bestie|bff")
#: two capitalised words (a hyphen or an apostrophe inside), each a whole word: a given name and a surname, perhaps
_LISTED_PAIR = re.compile(r"(?<![\w'’-])([A-ZÀ-ÖØ-ÞĀ-Ž][a-zß-öø-ÿā-ž]+(?:-[A-ZÀ-ÖØ-ÞĀ-Ž][a-zß-öø-ÿā-ž]+)?) "
                          r"([A-ZÀ-ÖØ-ÞĀ-Ž][a-zß-öø-ÿā-ž]+(?:[-'’][A-ZÀ-ÖØ-ÞĀ-Ž][a-zß-öø-ÿā-ž]+)?)(?![\w'’-])")
#: an organisation's word right after a pair of names ("Maria Hospital", "Fernández Group")
_ORG_AFTER = re.compile(r" (?:Inc|Ltd|LLC|GmbH|AG|SA|Group|Bank|University|College|School|Hospital|Clinic|Foundation|"
                        r"Institute|Street|Road|Avenue|Stadium|Park|Hall|Centre|Center)\b")
#: a line of two or three words in capitals and nothing else
#: (letters of Latin-1 and Latin Extended too, read as capitals by `str.isupper`: "ANH THƯ NGUYỄN")
_CAPS_LINE = re.compile(r"^[ \t]{0,8}([A-ZÀ-ÖØ-ÞĀ-ɏḀ-ỿ][A-ZÀ-ÖØ-ÞĀ-ɏḀ-ỿ'’-]{1,20}(?:[ \t][A-ZÀ-ÖØ-ÞĀ-ɏḀ-ỿ]"
                        r"[A-ZÀ-ÖØ-ÞĀ-ɏḀ-ỿ'’-]{1,20}){1,2})[ \t]*$", re.M)
#: a name in capitals that begins a row of a list or a table ("ANITA MEHRA-ROWE / 548213907 / 03/2031")
_CAPS_ROW = re.compile(r"^[ \t]{0,8}(?:\d{1,3}[.)][ \t]{1,2})?([A-Z][A-Z'’-]{1,20}(?:[ \t][A-Z][A-Z'’-]{1,20}){1,2})"
                       r"[ \t]{0,3}(?:[/|,;–—]|-[ \t]|\t)", re.M)
#: two capitalised words in capitals anywhere: a bank statement's payee, an M-Pesa message's name
_CAPS_NAME = re.compile(r"(?<![A-Za-z0-9'’-])([A-Z][A-Z'’-]{2,20}[ \t][A-Z][A-Z'’-]{2,20})(?![A-Za-z0-9'’-])")
#: a given name, a nickname in quotes, a surname: 'Mariusz "Maniek" Grabowski', 'Rogelio "Jun-Jun" Santos'
_NICKNAMED = re.compile(r"(?<![\w'’-])([A-ZÀ-ÖØ-ÞĀ-Ž][a-zß-öø-ÿā-ž]{1,20})[ \t]{1,2}[\"“'‘]([^\"”'’\n]{2,24})[\"”'’][ \t]{1,2}"
                        r"([A-ZÀ-ÖØ-ÞĀ-Ž][\w'’-]{1,24}(?:[ \t][A-ZÀ-ÖØ-ÞĀ-Ž][\w'’-]{1,24})?)")
#: a capitalised word alone (a given name the lists hold, with no surname after it)
_NAME_ALONE = re.compile(r"(?<![\w'’@./-])[A-ZÀ-ÖØ-ÞĀ-Ž][a-zß-öø-ÿā-ž]{2,15}(?![\w'’@-]|[ \t][A-ZÀ-ÖØ-ÞĀ-Ž])")




def _word_list(first: str, tail: str = "") -> re.Pattern:
    """Three to twelve single words in a list, each beginning with a letter of `first`'s class and joined by ", ",
    ", and ", " and " or " & ": "kofi, isla-rose, mohammed", "Hamid, Yasmin, Cormac, Tereza"; `tail`: what may not
    follow the last word either."""
    word = first + r"[a-zß-öø-ÿā-ž'’-]{1,20}"
    return re.compile(r"(?<![\w'’-])" + word + r"(?:(?:,[ \t]{1,2}(?:and[ \t]{1,2}|&[ \t]{1,2})?|[ \t]{1,2}(?:and|&)[ \t]{1,2})"
                      + word + r"){2,11}(?![\w'’-]" + tail + ")")


_LOWER_LIST = _word_list(r"[a-zß-öø-ÿā-ž]")  # "kofi, isla-rose, mohammed"
#: "Hamid, Yasmin, Cormac, Tereza", "Kemi, Tunde and Bayo" (not where the last word begins a full name)
_GIVEN_LIST = _word_list(r"[A-ZÀ-ÖØ-ÞĀ-Ž]", r"|[ \t][A-Z]")
#: a possessive, a kinship or role noun and up to three lower-case words: "my friend priya sharma"
_KIN_LOWER = re.compile(r"\b(?:my|our|his|her|their|[a-z]{2,12}['’]s)\s(?:best\s|old\s|new\s|little\s|big\s)?(?:" + _KIN_NOUNS +
                        r"|bro|sis|cuz|bestie|ex|bf|gf|hubby|wifey|" +
                        r")\s((?:[a-z][a-z'’-]{1,20}\s?){1,3})")
#: the last words before a name that say it is a person the user knows ("my daughter", "our neighbours, the")
_KIN_BEFORE = re.compile(r"\b(?:" + _KIN_NOUNS + r")s?(?:,|\s)+(?:is\s+|was\s+|the\s+|mr\.?\s+|"
                         r"mrs\.?\s+|ms\.?\s+|dr\.?\s+)?$"
                         r"|\b(?:married|wedding|engaged|engagement|marriage)\s+to\s+$|\bdivorced?\s+from\s+$", re.I)
#: verbs that address a person ("reply to Gustavo", "remind Ines that …"): a given name after them is someone's
_ADDRESSING = re.compile(r"\b(?:reply|write|respond|talk|speak|say|said|apologi[sz]e|introduce\s+me)\s+to\s+$|"
                         r"\b(?:ship|shipped|deliver|delivered|send|sent|forward|forwarded|post|posted|mail|mailed|"
                         r"addressed)(?:\s+(?:it|this|them|these))?\s+to\s+$|\b(?:attention|attn)[.:]?\s+$|"
                         r"\b(?:tell|told|ask|asked|remind|reminded|thank|thanked|invite|invited|email|e-mail|"
                         r"emailed|text|texted|call|called|message|messaged|ping|pinged|congratulate|cc|dear|hi|"
                         r"hello)\s+$", re.I)
#: an e-mail address right after a name, in brackets: "Gustavo (gustavo.pereira@…)", "Ana Lima <ana@…>"
_ADDRESS_AFTER = re.compile(r"[(<]\s*(?:mailto:)?([^\s@()<>]{1,64})@")


#: words that introduce a person's own name: "my name is …", "Name: …", "call me …", "I'm …" (not "named" or
#: "called": "a cat named Whiskers")
_INTRO_ANY = re.compile(r"(?:\bmy\s+(?:full\s+)?name\s+is|\bmy\s+name['’]s|\bname\s*:|\bcall\s+me|"
                        r"\b(?:account|booking|card)(?:holder['’]?s)?\s+(?:holder['’]?s\s+)?name\s+is|"  # "The account name is …"
                        r"\b(?:her|his|their)\s+name\s+is|\b(?:her|his|their)\s+name['’]s|"
                        r"\bin\s+my\s+(?:full\s+)?name,|\bunder\s+my\s+(?:full\s+)?name,|"
                        # the same in Dutch, Spanish, French, German, Italian, Portuguese, Polish and Turkish
                        r"\bmijn\s+naam\s+is|\bik\s+heet|\bmi\s+nombre\s+es|\bme\s+llamo|\bje\s+m['’]appelle|"
                        r"\bmon\s+nom\s+est|\bich\s+hei(?:ß|ss)e|\bmein\s+name\s+ist|\bmi\s+chiamo|"
                        r"\bil\s+mio\s+nome\s+è|\bmeu\s+nome\s+é|\bme\s+chamo|\bnazywam\s+się|\bmam\s+na\s+imię|"
                        r"\bbenim\s+adım|\badım)\s+$", re.I)
_INTRO_GIVEN = re.compile(r"(?:\bi\s+am|\bi['’]m|\bthis\s+is|\bit['’]s|"
                          # a text message's "its" without its apostrophe, after a greeting ("Hi its Nadia Sharif")
                          r"\b(?:hi|hey|hiya|hello)[ \t]*[,!]?[ \t]*its)\s+$", re.I)
#: what follows a writer's given name that NER took for a place: "I'm Kaveh, 35", "I'm Kaveh and …", "I'm Kaveh."
_SELF_NAMED_AFTER = re.compile(r",| (?:and|from|here)\b| ?[.!](?:\s|$)")
#: "I'm Hugo", "this is Ines" (not "it's": "it's April")
_INTRO_SELF = re.compile(r"(?:\bi\s+am|\bi['’]m|\bthis\s+is)\s+$", re.I)
#: months and days that are given names too are not read as one after "this is" or "I'm" ("this is May's invoice")
_CALENDAR = frozenset({"january", "february", "march", "april", "may", "june", "july", "august", "september",
                       "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
                       "saturday", "sunday"})
#: words that end an organisation's name: never a person's
ORG_WORDS = frozenset({"inc", "ltd", "llc", "corp", "corporation", "company", "co", "gmbh", "ag", "sa", "plc", "bank",
                        "union", "university", "college", "school", "hospital", "clinic", "group", "foundation",
                        "association", "institute", "council", "ministry", "department", "agency", "services",
                        "solutions", "systems", "technologies", "partners", "studio", "studios", "labs", "estates",
                        "properties", "lettings", "realty", "holdings", "associates", "enterprises", "industries",
                        "consulting", "logistics", "insurance"})


#: a letter's sign-off on the line before: the next line is its writer's name ("Best,\nAoife Gallagher")
_SIGN_OFF = re.compile(r"(?:best|best\s+regards|kind\s+regards|warm\s+regards|warmest\s+regards|regards|cheers|thanks|"
                       r"thank\s+you|many\s+thanks|sincerely|yours\s+sincerely|yours\s+faithfully|yours\s+truly|"
                       r"best\s+wishes|all\s+the\s+best|warmly|respectfully|love|take\s+care|with\s+gratitude|"
                       r"with\s+thanks|with\s+love|with\s+best\s+wishes|gratefully|lots\s+of\s+love|much\s+love|"
                       r"yours|thanks\s+again|thank\s+you\s+again|speak\s+soon)[ \t]*[,.!]?[ \t]*\n[ \t]*$",
                       re.I)


def signed(text: str, start: int, end: int) -> bool:
    """Whether `start`..`end` is a whole line of one to three capitalised words right after a letter's sign-off
    line that holds nothing else ("Best,", "Kind regards,"): the writer's name."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start:len(text) if line_end < 0 else line_end].strip()
    if line != text[start:end].strip():
        return False
    words = _WORD.findall(line)
    prev_start = text.rfind("\n", 0, max(0, line_start - 1)) + 1
    return 1 <= len(words) <= 3 and all(w[:1].isupper() for w in words) and \
        all(_name_word(w, after_name=k > 0) for k, w in enumerate(words)) and \
        _SIGN_OFF.fullmatch(text[prev_start:line_start].strip() + "\n") is not None


def _introduced(text: str, h, given: bool = True) -> bool:
    """A span NER typed as something else right after words that introduce a person's name: any capitalised
    words after "my name is", "Name:", "call me"; after "I'm", "this is" only when the first word is a given name
    ("this is Lakeview Credit Union" stays an organisation) and `given` allows it (not for a place: "it's Sydney")."""
    before = text[max(0, h.start - 30):h.start]
    words = _WORD.findall(h.text)
    if not words or len(words) > 5 or not all(w[:1].isupper() or 0 < k < len(words) - 1 and w in PARTICLES
                                              for k, w in enumerate(words)) or \
            any(w.casefold() in ORG_WORDS for w in words):
        return False  # a surname's particle may stand between the names: "Sanne de Wilde-Koster"
    if _INTRO_ANY.search(before):
        return True
    return given and bool(_INTRO_GIVEN.search(before)) and words[0].casefold() in faker_names(
        "first_names", "first_names_male", "first_names_female")


#: a possessive, at most one word, and a job noun right before a name: "our nanny, Marisol Quispe", "my tax
#: accountant Ruth Ames" (the job is what the person is to the user)
_OWN_WORKER = re.compile(r"\b(?:my|our|his|her|their|your)\s+(?:[a-z]+\s+)?([a-z]+)(?:,\s*|\s+)$", re.I)


def _own_worker(before: str) -> bool:
    m = _OWN_WORKER.search(before)
    if not m:
        return False
    noun = m.group(1).casefold()
    return noun in OCCUPATIONS or (noun.endswith("s") and noun[:-1] in OCCUPATIONS)


def _kin_name(text: str, h) -> bool:
    """A span NER typed as an organisation or a group that follows a kinship or role noun or a marriage ("my
    daughter …", "her wedding to …") and whose words may be a name: listed given names or surnames, or capitalised
    words no English dictionary holds as ordinary ("my best friend Olamide": Faker's lists cannot hold every
    name); a family's plural "Abernathys" too."""
    before = text[max(0, h.start - 40):h.start]
    if not _KIN_BEFORE.search(before) and not _own_worker(before):
        return False
    words = _WORD.findall(h.text)
    names = given_and_surnames()
    if len(words) == 1 and words[0][:1].isupper() and words[0].endswith("s") and \
            re.search(r"\bthe\s+$", text[max(0, h.start - 6):h.start], re.I):
        return True  # "our neighbours, the Abernathys": a family by its surname
    return bool(words) and len(words) <= 3 and all(
        w.casefold() in names or (w.endswith("s") and w[:-1].casefold() in names) or
        (w[:1].isupper() and not w.isupper() and w.casefold() not in ORG_WORDS and _zipf(w.casefold()) < 3.0)
        for w in words)


def _addressed(text: str, h) -> bool:
    """A span NER typed as an organisation that names the person the user writes to: followed by an e-mail
    address whose local part holds one of its words ("Gustavo (gustavo.pereira@…)"), or a given name after a verb
    that addresses someone ("reply to Gustavo", "remind Ines that …")."""
    words = _WORD.findall(h.text)
    if not words or len(words) > 3 or not all(w[:1].isupper() for w in words) or \
            any(w.casefold() in ORG_WORDS for w in words):
        return False
    m = _ADDRESS_AFTER.match(text[h.end:h.end + 90].lstrip())
    if m and any(len(w) >= 3 and w.casefold() in m.group(1).casefold() for w in words):
        return True
    return bool(_ADDRESSING.search(text[max(0, h.start - 20):h.start])) and \
        words[0].casefold() in faker_names("first_names", "first_names_male", "first_names_female")


def ordinary(word: str) -> bool:
    """An ordinary English word (Zipf ≥ 3.5) that is not also a given name or surname; a hyphenated word is read
    whole ("Min-jun" is no word, though "min" and "jun" are). Not lower: names Faker's lists lack sit between 3.0
    and 3.5 (Rahul 3.36, Mei 3.39, Akira 3.2, Yuki 3.05), as do "Pandas" and "Postman", and a name left is worse
    than a word changed."""
    w = word.casefold()
    return w not in given_and_surnames() and w not in _SHORT_NAMES and _zipf(w.replace("-", "")) >= 3.5



def work_name(text: str, h, persons) -> bool:
    """A work's maker ("… by Jane Austen"), a public life asked about ("a biography of Marie Curie", "what did Ada
    Lovelace contribute to …", "Euler's theorem") or a work
    named after a character ("Dune by Frank Herbert", "Harry Potter and the Philosopher's Stone by …", where a
    name follows "by"), unless the words next to the name tie it to someone ("my cousin", a person noun)."""
    before = text[max(0, h.start - 80):h.start]
    near = [w.casefold() for w in _WORD.findall(before)[-4:] + _WORD.findall(text[h.end:h.end + 30])[:3]]
    if any(w in _POSSESSIVES or w in PERSON_WORDS for w in near):
        return False  # "a poem by my cousin Rosa", "… by Rosa, my cousin"
    if _AUTHORED.search(before) or _PUBLIC_BEFORE.search(before):
        return True
    if _PUBLIC_AFTER.match(text[h.end:h.end + 40]):  # not a given name alone: "did Tom invent that excuse?"
        key = h.text.strip().casefold()
        return " " in key or key not in faker_names("first_names", "first_names_male", "first_names_female") or \
            key in faker_names("last_names")
    m = _TITLE_TO_BY.match(text, h.end)
    return bool(m) and not _TWO_OBJECTS.search(text[max(0, h.start - 40):h.start]) and \
        not _NOT_TITLE_WORD.search(m.group(0)) and any(p.start == m.end() for p in persons)


def product_after(text: str, h) -> bool:
    """A name that a software or platform noun follows ("the Flask server", "a LinkedIn message"), unless a verb
    hands the noun to a person ("send Tom Baker documentation")."""
    return bool(_PRODUCT_AFTER.search(text[h.end:h.end + 60])) and \
        not _TWO_OBJECTS.search(text[max(0, h.start - 40):h.start])


def product(text: str, h) -> bool:
    """A name its words make a product: a software noun or a version after it ("my Django app", "Jenkins 2.401.1"),
    a possessive and a code word ("Docker's COPY") or, for a word no list holds as a name, a part of a programming
    language ("Kotlin's coroutine scope"), unless a verb hands the noun to the person ("send Tom Baker
    documentation"); a single name after an indefinite article ("push to a Vec")."""
    value = h.text.strip()
    if product_after(text, h):
        return True
    if _LANGUAGE_OWNS.match(text, h.end) and " " not in value and not listed_name(value):
        return True  # "Kotlin's coroutine scope" (not "Anna's coroutine talk": a listed name may be a speaker's)
    return " " not in value and re.search(r"(?:^|\W)an?\s+$", text[max(0, h.start - 4):h.start]) is not None


def _who_follows(text: str, h) -> bool:
    """A span NER typed as an organisation that a relative "who" follows and whose first word is a listed given
    name ("a card for Siobhan O'Connor-Whitfield, who retires on Friday"): a person."""
    words = _WORD.findall(h.text)
    return 2 <= len(words) <= 4 and all(w[:1].isupper() for w in words) and \
        words[0].casefold() in world_given_names() and not any(w.casefold() in ORG_WORDS for w in words) and \
        re.match(r",?\s+who\b", text[h.end:h.end + 8]) is not None


def _possessed_name(text: str, h) -> bool:
    """A place's span of two or three words, a listed given name first and no ordinary word, that owns something
    ("Priya Venkataraman's commit"): a person's name (not "Alice Springs's", "Victoria Falls's": ordinary words)."""
    words = h.text.split()
    return 2 <= len(words) <= 3 and words[0].casefold() in world_given_names() and \
        not any(ordinary(w) for w in words) and all(_name_word(w, after_name=k > 0) for k, w in enumerate(words)) and \
        re.match(r"['’]s\s+[a-z]", text[h.end:h.end + 5]) is not None


def person_by_cue(text: str, h) -> bool:
    """A span NER typed as an organisation, a group or a place that its words make a person's name: introduced
    ("my name is Darnell Okoro"), after a kinship or role noun or a marriage with names for words ("my daughter
    Sofia Marchand", "our neighbours, the Abernathys", "wedding to Tunde Bakare"; not a place: "my friend in
    Sydney"), or addressed ("reply to Gustavo", "Gustavo (gustavo.pereira@…)")."""
    if h.entity not in ("ORGANIZATION", "NRP", "LOCATION"):
        return False
    place = h.entity == "LOCATION"
    if place and _INTRO_GIVEN.search(text[max(0, h.start - 30):h.start]):  # "I'm Haruto Sato", not "I'm in Sydney"
        words = re.findall(r"\S+", h.text)
        if len(words) == 1 and _INTRO_SELF.search(text[max(0, h.start - 30):h.start]) and \
                _SELF_NAMED_AFTER.match(text, h.end) and _name_word(words[0]) and words[0][1:].islower():
            return True  # "I'm Kaveh, 35, a pharmacist in Shiraz": the writer is no place
        return 2 <= len(words) <= 3 and all(w[:1].isupper() and _name_word(w, after_name=k > 0)
                                            for k, w in enumerate(words))
    if place and _possessed_name(text, h):
        return True  # "stopped at Priya Venkataraman's commit": NER's place is a given name and a surname
    nationality = h.entity == "NRP" and " " not in h.text.strip()  # "I'm German": no one named Germán
    return _introduced(text, h, given=not place and not nationality) or \
        (not place and (_kin_name(text, h) or _addressed(text, h) or signed(text, h.start, h.end) or
                        _who_follows(text, h)))


#: kinship nouns that say a person's sex ("my husband Kenji", "her sister, Ana")
_KIN_SEX = {**dict.fromkeys(("husband", "son", "father", "dad", "brother", "boyfriend", "fiance", "uncle", "nephew",
                             "grandfather", "grandson", "stepfather", "stepson", "grandpa"), "m"),
            **dict.fromkeys(("wife", "daughter", "mother", "mom", "mum", "sister", "girlfriend", "fiancee", "aunt",
                             "niece", "grandmother", "granddaughter", "stepmother", "stepdaughter", "grandma"), "f")}
_KIN_SEX.update({**dict.fromkeys(MEN_TITLES, "m"), **dict.fromkeys(WOMEN_TITLES, "f")})  # a title outside the span
_KIN_SEX_BEFORE = re.compile(r"\b(" + "|".join(sorted(_KIN_SEX, key=len, reverse=True)) + r")\.?(?:,\s*|\s+)$", re.I)


#: "her nickname, Nónó", "his name is Kwabena": the pronoun says whose name it is
_NAMED_BY_PRONOUN = re.compile(r"\b(her|his)\s+(?:full\s+|first\s+|real\s+|middle\s+)?(?:nickname|name|pet\s+name)"
                               r"(?:\s+is|,|:)?\s+$", re.I)


#: a key or a label whose value is a surname alone: "last_name": "Márquez", surname=Okafor, Nachname: Vogel
_SURNAME_KEY_BEFORE = re.compile(r"(?:last_?name|lastname|surname|family_?name|familyname|nachname|apellidos?|nom_de_famille|"
                                 r"cognome|achternaam)[\"']?\s{0,3}[:=]\s{0,3}[\"']?$", re.I)


def surname_alone(text: str, value: str) -> bool:
    """Whether `value`, one word, stands in `text` under a key or a label that holds a surname alone ("last_name":
    "Márquez"): its stand-in is a surname, not a given name."""
    if " " in value.strip():
        return False
    start = text.find(value)
    while start >= 0:
        if _SURNAME_KEY_BEFORE.search(text, max(0, start - 24), start):
            return True
        start = text.find(value, start + 1)
    return False


def kin_sex(text: str, value: str) -> str:
    """'m' or 'f' when a kinship noun or a title right before `value` in `text` says the person's sex ("my husband
    Kenji Watanabe", "Mr. Baptiste Moreau"), else '': a stand-in for a name the lists do not know keeps the
    person's sex."""
    sexes = set()
    start = text.find(value)
    while start >= 0 and len(sexes) < 2:
        m = _KIN_SEX_BEFORE.search(text[max(0, start - 20):start])
        if m:
            sexes.add(_KIN_SEX[m.group(1).casefold()])
        m = _NAMED_BY_PRONOUN.search(text[max(0, start - 30):start])
        if m:
            sexes.add("f" if m.group(1).casefold() == "her" else "m")
        start = text.find(value, start + 1)
    return sexes.pop() if len(sexes) == 1 else ""


#: up to three capitalised words (hyphenated parts and a possessive kept): "Amara", "Min-jun Park", "Nguyen Thi Hoa"
_NAME_RUN = re.compile(r"[A-Z][^\W\d_]*(?:[-'’][^\W\d_]+)*(?:[ \t]+[A-Z][^\W\d_]*(?:[-'’][^\W\d_]+)*){0,2}")


#: an initial and a surname: "J. Kowalczyk", "A. N. Okafor"
_INITIAL_NAME = re.compile(r"[A-Z]\.(?:[ \t]?[A-Z]\.)?[ \t]+([A-Z][^\W\d_]{2,}(?:[-'’][A-Z][^\W\d_]+)?)")
#: a person's role as a record's label, then the name: "Pupil: Amelie Fairweather-Obi", "Parent/carer: Nkechi …"
_ROLE_LABEL = re.compile(r"(?im)(?:^[ \t>*\-•]{0,4}|(?<=[ \t]{2})|(?<=\t)|(?<=\|[ \t])|(?<=;[ \t])|(?<=[.,][ \t]))"
                         # a second or another one: "Second contact: Grant Harding 0431 …" after a sentence
                         r"(?:(?:second|other|alternative|alternate|main|primary|secondary|backup)[ \t]+)?"
                         r"(?:pupil|student|candidate|customer|client|patient|tenant|landlord|"
                         r"supervisor(?:[ \t]+on[ \t]+(?:shift|duty))?|duty[ \t]+manager|shift[ \t]+lead|key[ \t]+worker|"
                         r"case[ \t]?worker|social[ \t]+worker|line[ \t]+manager|"
                         r"employee|applicant|parent|guardian|carer|child|member|passenger|guest|resident|beneficiary|"
                         r"claimant|defendant|witness|attendee|driver|contact|referee|next\s+of\s+kin|emergency\s+contact|"
                         r"reporter|assignee|author|committer|co-authored-by|owner|organi[sz]er|requester|approver|"
                         # a paper's contributor roles (CRediT): "Formal analysis: Olusegun Bakare"
                         r"conceptuali[sz]ation|data\s+curation|formal\s+analysis|funding\s+acquisition|investigation|"
                         r"methodology|project\s+administration|supervision|validation|visuali[sz]ation|"
                         r"reviewer|payee|pay\s+to|account\s+holder|account\s+name|submitted\s+by|prepared\s+by|"
                         r"signed|(?-i:[A-Z]{1,2}\d{1,4}))"
                         r"(?:['’]s\s+name|\s+name)?(?:/[a-z]{2,12})?(?:[ \t]\([^)\n]{1,40}\))?[ \t]{0,3}:[ \t]{0,3}"
                         r"(?=((?-i:[A-ZÀ-ÖØ-Þ])[^\n]{0,60}))")  # the value read ahead: another label may follow it
#: an iCalendar attendee's or organiser's common name: "ATTENDEE;CN=Anneliese Marchetti:mailto:…"
_CAL_NAME = re.compile(r"[;:]CN=\"?([A-ZÀ-ÖØ-Þ][^:;\n\"]{1,60})")
#: a chat log's speaker: "[09:14] Rhiannon Pryce: morning!", "12/03/2024, 09:14 - Rhiannon Pryce: …"
_SPEAKER = re.compile(r"(?m)^[ \t]{0,4}\[?(?:\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4},?[ \t]{1,2})?\d{1,2}:\d{2}(?::\d{2})?"
                      r"(?:[ \t]?[AaPp][Mm])?\]?[ \t]{0,3}-?[ \t]{0,3}((?-i:[A-ZÀ-ÖØ-Þ])[^\n:]{1,60}):")
#: a pasted chat's speaker with no time before: a full name at a line's start, then a colon ("Hannah Byrne: thx")
_SPEAKER_PLAIN = re.compile(r"(?m)^[ \t]{0,4}([A-ZÀ-ÖØ-Þ][\w'’-]{1,20}(?:[ \t][A-ZÀ-ÖØ-Þ][\w'’-]{1,20}){1,2}):[ \t]")
#: a contact's line: a name first, then a dash, a colon, a comma or a tab, and a phone number or an e-mail address
#: later on the line ("Kofi - mum Abena - 07534 882 913", "Finn O'Rourke: 07306 718 244")
_CONTACT_ROW = re.compile(r"(?m)^[ \t>*•·-]{0,4}(?:\d{1,3}[.)][ \t]{1,2})?((?-i:[A-ZÀ-ÖØ-Þ])"
                          r"(?:[^\n\t,:|–—-]|(?<=[^\W\d_])-(?=[^\W\d_])){0,40}?)"  # "Mei-Ling Tsao - +44 …"
                          r"(?:[ \t]{0,2}[–—:,|\t]|[ \t]{1,2}-)(?=[^\n]{0,120}?(?:\+?\d[\d ()-]{7,16}\d|@[\w-]{1,63}\.[a-z]{2,}|"
                          r"linkedin\.com/in/))")
#: words that begin a line's phrase, never a name there ("My" is a given name of the lists)
_DETERMINERS = frozenset({"my", "our", "your", "his", "her", "their", "its", "the", "a", "an", "this", "that", "these",
                          "those", "me", "we", "you", "i", "it"})
#: a name and right after it, in brackets, the person's own ORCID or phone number: "Sebastián Morales Peña (ORCID
#: 0000-0002-7714-3928)", "Adebayo Ogunleye (+234 803 417 2290)"
_OWN_ID_AFTER = re.compile(r"([A-ZÀ-ÖØ-Þ][^\W\d_]{1,30}(?:[-'’][A-ZÀ-ÖØ-Þ]?[^\W\d_]{1,30})?(?:[ \t](?:[A-ZÀ-ÖØ-Þ][^\W\d_]{0,30}"
                           r"(?:[-'’][A-ZÀ-ÖØ-Þ]?[^\W\d_]{1,30})?\.?|de|da|del|van|von|ap|bin|al)){1,3})[ \t]\((?:ORCID[:\s]{1,3}"
                           r"\d{4}-\d{4}-\d{4}-\d{3}[\dX]|\+\d[\d \-]{7,16}\d)\)")
#: a title or a family's word in lower case, then a name ("mr okafor", "dr bhattacharya", "tía lupe", "ciocia Basia")
_LOWER_TITLED = re.compile(r"\b(?:mr|mrs|ms|miss|dr|prof|uncle|aunty|auntie|aunt|t[ií]a|t[ií]o|ciocia|wujek|kuya|ate|"
                           r"tita|tito|bhai|didi|mama|papa)\.?[ \t]+([A-Za-zà-öø-ÿ][a-zà-öø-ÿ'’-]{2,20})\b")
#: a given name typed in lower case right after a word that names someone ("ask raj to join", "called fatima
#: al-zahra", "w/ ravi", "successor is khalid b."): the word after it is a surname of the lists, a surname's particle
#: joined to it ("al-zahra") or an initial
_LOWER_CUE = re.compile(r"\b(?:ask|asked|tell|told|call|called|calling|email|emailed|text|texted|ping|pinged|remind|"
                        r"reminded|message|messaged|cc|w/|with|meet|meeting|met|thank|thanks|from|to|and|by|hi|hey|"
                        r"dear|via|is|was|its|it['’]s|im|i['’]m)[ \t]+([a-z][a-zà-öø-ÿ'’-]{1,20})"
                        r"(?:[ \t]([a-z][a-zà-öø-ÿ'’-]{0,20}\.?))?(?![\w@])")
#: initials and a surname in capitals, as a bank statement or a form prints them ("FASTER PAYMENT TO O ADEYEMI",
#: "MR D J FAIRWEATHER", "K LINDQVIST RENT NOV")
_CAPS_INITIALS = re.compile(r"(?<![A-Za-z0-9])((?:(?:MR|MRS|MS|MISS|DR)\.?[ \t](?:[A-Z](?:[ \t][A-Z]){0,2}[ \t])?|"
                            r"[A-Z](?:[ \t][A-Z]){0,2}[ \t])([A-Z][A-Z'’]{1,20}(?:-[A-Z][A-Z'’]{1,20})?))(?![A-Za-z0-9])")
_PARTICLE_JOINED = re.compile(r"(?:al|el|bin|ibn|de|van|von|o['’]|mc|mac|ní|nic)-?[a-z]{2,}")
#: a day's booking: a time, then the client's name before a dash, a comma or a bracket ("9:00 Funmi Adeyemi - knotless
#: braids", "13:15 Aisha Bello - silk press")
_BOOKING_LINE = re.compile(r"(?m)^[ \t>*•-]{0,4}\d{1,2}[:.]\d{2}(?:[ \t]?[AaPp][Mm])?[ \t]{1,3}"
                           r"((?-i:[A-ZÀ-ÖØ-Þ])[^\n\t,(–—-]{1,40}?)[ \t]{0,2}[-–—,(]")
#: a list's item that a name labels ("- Oisín: not Mondays", "* Beatriz: mornings only")
_BULLET_NAME = re.compile(r"(?m)^[ \t]{0,4}[-*•][ \t]{1,3}((?-i:[A-ZÀ-ÖØ-Þ])[^\W\d_]{1,20}(?:[ \t](?-i:[A-ZÀ-ÖØ-Þ])"
                          r"[^\W\d_]{1,20}){0,2})[ \t]{0,2}:")
#: a name and the person's own e-mail right after it ("- Gemma Thornbury, gemma.t1989@gmail.com")
_NAME_THEN_EMAIL = re.compile(r"((?-i:[A-ZÀ-ÖØ-Þ])[^\W\d_]{1,20}(?:[ \t](?-i:[A-ZÀ-ÖØ-Þ])[^\W\d_'’-]{1,20}(?:[-'’]"
                              r"[^\W\d_]{1,20})?){1,2})[ \t]{0,2}[,<(][ \t]{0,2}(?:mailto:)?([\w.+-]{1,64})@[\w-]{1,63}\.")
#: whom someone went or talked to for advice or help: "I went to Tomasz for advice", "talked to Ana about it"
_TURNED_TO = re.compile(r"\b(?:went|go|going|turned|turn|talked|talk|spoke|speak|reached\s+out)\sto\s([A-Z][^\W\d_]{2,20})"
                        r"\s(?:for\s(?:advice|help|support|guidance|feedback|a\schat)|about\b)")
#: an executive's or a role's title right before a name: "CFO Lorraine Tebbutt", "Director Ana Lima"
_EXEC_ROLE = re.compile(r"\b(?:CEO|CFO|CTO|COO|CIO|CMO|CPO|CISO|VP|SVP|EVP|MD|GM|Chair|Chairman|Chairwoman|Director|"
                        r"Founder|Co-founder|Headteacher|Principal|Dean|Registrar|Coach|Captain|Officer|Inspector|"
                        r"Detective|Sergeant|Councillor|Senator|Rep\.|HCA|RN|GP|Nurse|Matron|Midwife|Consultant)"
                        r"\s([A-Z][^\W\d_]{1,20}(?:[ -][A-Z][^\W\d_]{1,20}){1,2})")
#: the remote user of a web server's access log line (common and combined formats)
_ACCESS_LOG_USER = re.compile(r"(?m)^\S{3,45} \S{1,45} ((?=[^\s\[]*[A-Za-z])[^\s\[-][^\s\[]{0,63}) \[\d{1,2}/\w{3}/\d{4}:")
#: a name's word, its hyphenated or apostrophed parts whole ("Min-jun", "Joon-ho", "O'Brien")
NAME_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")
#: a given name joined to the reader or the writer: "Could you and Marguerite come", "Marguerite and I will"
_WITH_ME = re.compile(r"\b(?:you|me|I|us)\s(?:and|&)\s([A-Z][^\W\d_]{2,20})\b|\b([A-Z][^\W\d_]{2,20})\s(?:and|&)\s(?:I|me)\b")
#: one or two capitalised words that ask, tell or send the writer something, or are on the writer's team: a person
_ACTS_ON_ME = re.compile(r"\b([A-Z][^\W\d_]{2,20}(?: [A-Z][^\W\d_]{2,20})?)(?:\s(?:on|in|from)\s(?:my|our)\s(?:team|squad|"
                         r"class|group|department|floor|unit|crew|project)\b|\s(?:asked|told|sent|emailed|e-mailed|"
                         r"messaged|texted|pinged|wants|wanted|needs|needed|invited|reminded|showed|gave|called|"
                         r"promised|offered|owes|paid)\s(?:me|us)\b)")
#: a title or an honorific of several languages, then the person's name: "Herrn Vogel", "Madame Girard", "Sra. Ortega"
#: (the stand-ins' list of titles, `surrogates.TITLES`, capitalised as a title is written before a name)
_TITLED = re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(t[:1].upper() + t[1:]) for t in sorted(TITLES, key=lambda t: (-len(t), t)))
                     + r")\.?(?:[ \t]+|[ \t]*\n[ \t]*)([A-ZÀ-ÖØ-Þ][^\W\d_]{1,30}(?:[-'’][A-ZÀ-ÖØ-Þ][^\W\d_]{1,30})?)"
                     r"(?:[ \t]([A-ZÀ-ÖØ-Þ][^\W\d_]{1,30}(?:[-'’][A-ZÀ-ÖØ-Þ][^\W\d_]{1,30})?)(?![\w-]))?")


def world_given_names() -> frozenset[str]:
    """Given names of many languages (`person_names.WORLD`, which holds the usual LOCALES too): a word after a
    strong cue may be a name."""
    return faker_names("first_names", "first_names_male", "first_names_female", locales=WORLD)


def _name_word(w: str, after_name: bool = False) -> bool:
    """A capitalised word that may be part of a person's name: a listed given name or surname, or no ordinary
    English word (not an acronym, nor an organisation's word; a hyphenated name is read whole: "Min-jun"), or a
    surname that is not one of the most common words ("my teacher English class" names no one)."""
    key = re.sub(r"['’]s$", "", w).casefold()
    if w.isupper() or key in ORG_WORDS:
        return False
    if key in world_given_names():
        return True  # "my daughter Grace"
    zipf = _zipf(key.replace("-", ""))
    # a surname, unless a very common word that starts the run ("my teacher English class"); after a name any
    # listed surname ("Min-jun Park", "Anna Long")
    return zipf < 3.5 or ((after_name or zipf < 4.5) and key in given_and_surnames())


def _addressed_name(words: list, j: int, given: frozenset[str]) -> bool:
    """Whether the `j`th of a run's capitalised words starts the name of someone addressed: a listed given name
    ("reply to Siobhan"), or a word no list or dictionary holds before a listed surname ("Tell Priyanka Rao
    that …": the lists cannot hold every given name, and the surname says a person follows)."""
    first = re.sub(r"['’]s$", "", words[j].group(0)).casefold()
    if first in given:
        return True
    return j + 1 < len(words) and not ordinary(first) and _zipf(first) < 3.0 and \
        re.sub(r"['’]s$", "", words[j + 1].group(0)).casefold() in faker_names("last_names", locales=WORLD)


#: what follows a person asked or told something: "Ask Priyanka to review it", "Tell Kemi that …", "Remind
#: Tunde about the rent", "Thank Ngozi for …", "Ask Ifeoma whether …"
_MESSAGE_AFTER = re.compile(r"(?:to|that|whether|if|about|for|why|when|how|what)\b")


def _addressed_alone(text: str, start: int, end: int) -> bool:
    """A single capitalised word that no list or dictionary holds, asked or told something right after an
    addressing verb ("Ask Priyanka to review it before Friday"): the lists cannot hold every given name. Not a
    product of the recognizers' list of terms that are no one's name ("Ask Copilot to …"), nor in a sentence about
    code or software, where such a word is a tool ("Ask Sourcery to refactor getUser()")."""
    w = text[start:end]
    key = w.casefold()
    if not (3 <= len(w) <= 14 and w.isalpha() and w[1:].islower()) or key in ORG_WORDS or _zipf(key) >= 3.0 or \
            key in recognizer_data()["not_name_terms"]:
        return False  # "Ask Copilot to …": a product the recognizers' lists hold is no one's name
    after = text[end:end + 16]
    if not (after.startswith((", ", ",\t")) or after[:1] in (" ", "\t") and _MESSAGE_AFTER.match(after.lstrip(" \t"))):
        return False
    sentence = _sentence(text, start, end)
    return not (_CODE_TOKEN.search(sentence) or _TECH_SENTENCE.search(sentence))


SIBLING_CUE = "listed beside a person's name"
#: cues that read only a name's shape, no word of the text around it: in a message about the world ("how did Hjalmar
#: Schacht end it?") they say nothing of whose name it is
SHAPE_CUES = frozenset({SIBLING_CUE, "a given name and a surname of the name lists"})
#: a list's joint between a person's name and the next item: ", ", ", and ", " and ", " & ", " or "
_JOINT_AFTER = re.compile(r"(?:[ \t]{0,3},[ \t]{0,3}(?:and[ \t]{1,3}|&[ \t]{1,3})?|[ \t]{1,3}(?:and|&|or)[ \t]{1,3})")
_JOINT_BEFORE = re.compile(r"(?:[ \t]{0,3},[ \t]{0,3}|[ \t]{1,3}(?:and|&|or)[ \t]{1,3})$")
_SIBLING_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]{1,19}|(?=['’]))(?:[-'’][^\W\d_]{2,20})?")


def _sibling_name(words: list[str]) -> bool:
    """Words that read as a person's name beside another person's, in any case ("ji-hoon baek", "siobhan o'leary"):
    none a word English text often uses nor in capitals, and a listed given name or surname among them or two words
    English text seldom has; not "croydon" or "kyoto" alone, nor "the team"."""
    if not words or not all(rare_in_lower(w) and not w.isupper() for w in words):
        return False  # "PESEL" after a name is the label of its number
    return any(listed_name(w) for w in words) or len(words) >= 2 and all(_zipf(w.casefold()) < 3.2 for w in words)


def siblings(text: str, persons: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The items listed next to a person's name that read as names too, whatever their case: "Freya Lindqvist and
    ji-hoon baek", "Hamid Karimi, siobhan o'leary". Up to three words each side, the longest run that reads as a
    name (`_sibling_name`); each as (start, end, the cue)."""
    out = []
    for a, b in persons:
        j = _JOINT_AFTER.match(text, b)
        if j:
            words = []
            for m in _SIBLING_WORD.finditer(text, j.end()):
                if len(words) == 3 or m.start() != (words[-1].end() + 1 if words else j.end()) or \
                        (words and text[words[-1].end()] not in " \t"):
                    break
                words.append(m)
            while words and not _sibling_name([m.group(0) for m in words]):
                words.pop()
            if words and (words[-1].end() == len(text) or not text[words[-1].end()].isalnum()):
                out.append((words[0].start(), words[-1].end(), SIBLING_CUE))
        j = _JOINT_BEFORE.search(text, max(0, a - 12), a)
        if j:
            left = text[max(0, j.start() - 70):j.start()]
            run: list = []
            for m in reversed(list(_SIBLING_WORD.finditer(left))[-3:]):
                if m.end() != (run[0].start() - 1 if run else len(left)) or run and left[m.end()] not in " \t":
                    break
                run.insert(0, m)
            while run and not _sibling_name([m.group(0) for m in run]):
                run.pop(0)
            if run and (run[0].start() == 0 or not left[run[0].start() - 1].isalnum()):
                off = j.start() - len(left)
                out.append((off + run[0].start(), off + run[-1].end(), SIBLING_CUE))
    return out


def cued_names(text: str) -> list[tuple[int, int, str]]:
    """Where `text` names a person by a cue alone, for the names a small NER misses: capitalised words after a
    kinship or role noun or a marriage ("my niece Amara", "my colleague Min-jun Park") that may be a name, and a
    given name of the lists after a verb that addresses someone ("reply to Siobhan", "Email Wanjiku") or after
    "I'm" ("Hi, I'm Hugo"), a letter's signature ("Best,\nAoife Gallagher"), a name introduced ("my name is Oluwaseun Adeyemi"), and a surname after an initial
    ("J. Kowalczyk") or a title of several languages ("Herrn Vogel", "Madame Girard"). A possessive "'s" is left out. Each as (start, end, the cue in a few
    words), for the decision's provenance."""
    out = [(m.start(), m.end(), "after an initial") for m in _INITIAL_NAME.finditer(text)
           if _name_word(m.group(1), after_name=True) and (m.start() == 0 or not text[m.start() - 1].isalnum())]
    out += [(m.start(), m.end(2) if m.group(2) and _name_word(m.group(2), after_name=True) and
             not ordinary(m.group(2)) and m.group(2).casefold() not in ORG_WORDS else m.end(1), "after a title")
            for m in _TITLED.finditer(text)  # "Aunty Ngozi Eze": the name's second word too
            if _name_word(m.group(1), after_name=True) and not ordinary(m.group(1))]
    labelled = [(m, "a name after a person's role label") for m in _ROLE_LABEL.finditer(text)] + \
        [(m, "an attendee's name in a calendar entry") for m in _CAL_NAME.finditer(text)] + \
        [(m, "a speaker in a chat log") for m in _SPEAKER.finditer(text)] + \
        [(m, "a speaker in a chat log") for m in _SPEAKER_PLAIN.finditer(text)  # "Hannah Byrne: @Mateus here's …"
         if m.group(1).split()[0].casefold() in world_given_names() and not ordinary(m.group(1).split()[-1])] + \
        [(m, "a client's name in a day's bookings") for m in _BOOKING_LINE.finditer(text)] + \
        [(m, "a name labelling a list's item") for m in _BULLET_NAME.finditer(text)
         if NAME_WORD.match(m.group(1)).group(0).casefold() in world_given_names()] + \
        [(m, "a name beginning a contact's line") for m in _CONTACT_ROW.finditer(text)
         if NAME_WORD.match(m.group(1)).group(0).casefold() not in _DETERMINERS]  # "My details: …" names no one
    for m, cue in labelled:  # "Pupil: Amelie Fairweather-Obi", "Assignee: Aoife Gallagher", "Pay to: C Okafor"
        words = list(NAME_WORD.finditer(m.group(1)))
        n = 0
        while n < len(words) and n < 5 and (not n or m.group(1)[words[n - 1].end():words[n].start()] in (" ", ". ")) \
                and (words[n].group(0)[:1].isupper() and (
                    _name_word(words[n].group(0), after_name=n > 0) and (not ordinary(words[n].group(0)) or
                                                                          n and listed_name(words[n].group(0))) or
                    not n and len(words[n].group(0)) == 1 and len(words) > 1)  # an initial first: "C Okafor"
                     or n and words[n].group(0) in PARTICLES and n + 1 < len(words) and  # "Anneke de Vries"
                     (words[n + 1].group(0)[:1].isupper() or words[n + 1].group(0) in PARTICLES) and
                     m.group(1)[words[n].end():words[n + 1].start()] == " "):
            n += 1  # the name's words, one space apart: "Nkechi Fairweather-Obi, 07593 …" ends at the comma
        while n and words[n - 1].group(0) in PARTICLES:
            n -= 1  # a particle ends no name
        firm = n < len(words) and words[n].group(0).casefold() in ORG_WORDS  # "Customer: Acme Widgets Ltd"
        # a label inside a sentence ("… 915. Second contact: Grant Harding") vouches only for a listed given name
        inside = cue == "a name after a person's role label" and m.start() >= 2 and \
            text[m.start() - 1] in " \t" and text[m.start() - 2] in ".,"
        if not firm and (n >= 2 and not inside or n and words[0].group(0).casefold() in world_given_names()):
            out.append((m.start(1), m.start(1) + words[n - 1].end(), cue))
    for m in _NAME_THEN_EMAIL.finditer(text):  # "Gemma Thornbury, gemma.t1989@gmail.com": the address is theirs
        local = m.group(2).casefold()
        words = m.group(1).split()
        if any(len(w) >= 3 and w.casefold() in local for w in words) and \
                not any(w.casefold() in ORG_WORDS for w in words):
            out.append((m.start(1), m.end(1), "a name before its own e-mail address"))
    for m in _LOWER_TITLED.finditer(text):  # "call mr okafor", "with dr bhattacharya", "my tía lupe"
        w = m.group(1)
        if (m.group(0)[:1].islower() or w[:1].islower()) and not ordinary(w.casefold()) and _zipf(w.casefold()) < 3.5 \
                and w.casefold() not in recognizer_data()["not_name_terms"]:
            out.append((m.start(1), m.end(1), "a name after a title in lower case"))
    for m in _CAPS_INITIALS.finditer(text):  # "TO O ADEYEMI", "FROM J MENSAH-BONSU": a statement's payee
        parts = m.group(2).casefold().split("-")
        titled = m.group(1)[:2] in ("MR", "MS", "DR", "MI")  # "MR D J FAIRWEATHER": the title vouches for it
        if (titled or all(p in faker_names("last_names", locales=WORLD) or listed_name(p.title()) for p in parts)) and \
                not any(ordinary(p) for p in parts):
            out.append((m.start(1), m.end(1), "initials and a surname in capitals"))
    for m in _LOWER_CUE.finditer(text):  # "ask raj to join", "called fatima al-zahra (ops mgr)", "khalid b."
        first, second = m.group(1), m.group(2)
        if first not in world_given_names() or _zipf(first) >= 3.4 or ordinary(first) or \
                first in recognizer_data()["not_name_terms"]:
            continue
        end = m.end(1)
        if second and (len(second.rstrip(".")) == 1 or _PARTICLE_JOINED.fullmatch(second) or
                       second in faker_names("last_names", locales=WORLD) and _zipf(second) < 3.4):
            end = m.end(2) if len(second.rstrip(".")) > 1 or second.endswith(".") else m.start(2) + 1
        out.append((m.start(1), end, "a given name in lower case after a word that names someone"))
    for m in _OWN_ID_AFTER.finditer(text):  # "Sebastián Morales Peña (ORCID 0000-…)", "Adebayo Ogunleye (+234 …)"
        words = m.group(1).split()
        if all(_name_word(w.rstrip("."), after_name=k > 0) or w in PARTICLES for k, w in enumerate(words)) and \
                not any(w.casefold() in ORG_WORDS for w in words) and not ordinary(words[0]):
            out.append((m.start(1), m.end(1), "a name before its own ORCID or phone number"))
    for m in _EXEC_ROLE.finditer(text):  # "sign-off from CFO Lorraine Tebbutt", "Head of Sales Priya Nair"
        words = m.group(1).split()
        if words[0].casefold() in world_given_names() and all(_name_word(w, after_name=k > 0) for k, w in enumerate(words)):
            out.append((m.start(1), m.end(1), "a name after a role"))
    for m in _ACCESS_LOG_USER.finditer(text):  # "86.27.190.54 - ellie.marchetti [02/Dec/2026:03:15:41 +0000]"
        out.append((m.start(1), m.end(1), "an access log's user"))
    for m in _TURNED_TO.finditer(text):  # "I went to Tomasz for advice": a place gives no advice
        if m.group(1).casefold() in world_given_names() and not ordinary(m.group(1)):
            out.append((m.start(1), m.end(1), "a given name someone went to for advice or help"))
    for m in _WITH_ME.finditer(text):  # "Could you and Marguerite come …", "Marguerite and I"
        w = m.group(1) or m.group(2)
        if w.casefold() in world_given_names() and not ordinary(w):
            a = m.start(1) if m.group(1) else m.start(2)
            out.append((a, a + len(w), "a given name beside the writer or the reader"))
    for m in _ACTS_ON_ME.finditer(text):  # "Ifeoma asked me to review her PR", "Tomasz on my team wants …"
        words = m.group(1).split()
        if all(_name_word(w, after_name=k > 0) and not ordinary(w) and
               w.casefold() not in recognizer_data()["not_name_terms"] for k, w in enumerate(words)):
            out.append((m.start(1), m.end(1), "a person who acts on the writer or is on their team"))
    given = world_given_names()
    for m in _LISTED_PAIR.finditer(text):  # "Lucía Fernández", "Katharina Vogel": in any language, no cue needed
        first, last = m.group(1), m.group(2)
        if first.casefold() in given and (last.casefold() in faker_names("last_names", locales=WORLD) or
                                          listed_name(last) and not ordinary(last)) and \
                _zipf(first.casefold()) < 3.0 and _zipf(last.casefold()) < 3.0 and \
                not (m.end() < len(text) and _ORG_AFTER.match(text, m.end())):
            out.append((m.start(), m.end(), "a given name and a surname of the name lists"))
    for m in _CAPS_LINE.finditer(text):  # a CV's or a letter's heading: "AYESHA RAHMAN" on a line of its own
        words = m.group(1).split()
        if m.group(1).isupper() and words[0].casefold() in given and \
                words[-1].casefold() in faker_names("last_names", locales=WORLD) and \
                not any(w.casefold() in ORG_WORDS for w in words):
            out.append((m.start(1), m.end(1), "a name in capitals on a line of its own"))
    if sum(c.isupper() for c in text) < 0.5 * sum(c.isalpha() for c in text):  # a text in capitals says nothing so
        for m in _CAPS_ROW.finditer(text):  # a passenger list: "ANITA MEHRA-ROWE / 548213907 / 03/2031"
            words = m.group(1).split()
            if words[0].casefold() in given and not ordinary(words[0]) and \
                    not any(w.casefold() in ORG_WORDS for w in words):
                out.append((m.start(1), m.end(1), "a name in capitals beginning a row"))
    if sum(c.isupper() for c in text) < 0.5 * sum(c.isalpha() for c in text):
        for m in _CAPS_NAME.finditer(text):  # "FASTER PAYMENT TO MEGAN HOLLINGWORTH REF RENT", "was WANJIKU NJOROGE"
            words = m.group(1).split()
            first = words[0].casefold()
            if first in given and not ordinary(first) and first not in WORD_NAMES and \
                    words[1].casefold() not in ORG_WORDS and not ordinary(words[1]) and \
                    words[1].casefold() not in recognizer_data()["not_name_terms"]:
                out.append((m.start(1), m.end(1), "a given name and a surname in capitals"))
    for m in _NICKNAMED.finditer(text):  # 'Mariusz "Maniek" Grabowski': NER stops at the quotes
        if m.group(1).casefold() in given and not ordinary(m.group(1)) and \
                all(_name_word(w, after_name=True) for w in m.group(3).split()):
            out.append((m.start(), m.end(), "a name with a nickname in quotes"))
    for m in _GIVEN_LIST.finditer(text):  # 'Team "Quiztopher Columbus": Hamid, Yasmin, Cormac, Tereza'
        items = list(re.finditer(r"[^\W\d_][\w'’-]*", m.group(0)))
        items = [w for w in items if w.group(0) not in ("and",)]
        named = [w for w in items if w.group(0).casefold() in given and not ordinary(w.group(0))]
        if len(named) >= max(2, (2 * len(items) + 2) // 3) and \
                not any(w.group(0).casefold() in ORG_WORDS or ordinary(w.group(0)) for w in items):
            out += [(m.start() + w.start(), m.start() + w.end(), "a list of given names") for w in items]
    for m in _LOWER_LIST.finditer(text):  # "kofi, isla-rose, mohammed (his mum is on …)": an invite list typed fast
        items = [w for w in re.finditer(r"[^\W\d_][\w'’-]*", m.group(0)) if w.group(0) != "and"]
        if len(items) >= 3 and all(w.group(0) in given and w.group(0) not in WORD_NAMES and _zipf(w.group(0)) < 4.5
                                   or _zipf(w.group(0).replace("-", "")) < 2.5 and not ordinary(w.group(0))
                                   for w in items) and sum(w.group(0) in given for w in items) * 3 >= 2 * len(items):
            out += [(m.start() + w.start(), m.start() + w.end(), "a list of given names") for w in items]
    for m in _KIN_LOWER.finditer(text):  # "my friend priya sharma said …": typed without capitals
        words = list(re.finditer(r"[a-z][a-z'’-]*", m.group(1)))
        first = words[0].group(0) if words else ""
        if not first or (first not in given or _zipf(first) >= 3.5) and (_zipf(first) >= 3.0 or ordinary(first)) and \
                (first not in given or first in WORD_NAMES or _zipf(first) >= 5.0):
            continue  # "my friend mark said": a given name that is a common word may be no name in lower case ("my
            # sister amaka": a rare word no list holds is one; "his mum sarah": a given name no English word)
        n = 1
        while n < len(words) and listed_name(words[n].group(0)) and _zipf(words[n].group(0)) < 3.5:
            n += 1
        out.append((m.start(1), m.start(1) + words[n - 1].end(), "a name in lower case after a kinship or role noun"))
    for m in _NAME_RUN.finditer(text):
        if signed(text, m.start(), m.end()):
            out.append((m.start(), m.end(), "a letter's signature"))  # "Thanks,\nTomasz"
            continue
        words = list(re.finditer(r"\S+", m.group(0)))
        for j, w in enumerate(words):  # the cue may be the run's first word: "Email Wanjiku", "Hi Priya"
            at = m.start() + w.start()
            before = text[max(0, at - 40):at]
            if _KIN_BEFORE.search(before):
                n, cue = j, "after a kinship or role noun"
            elif _ADDRESSING.search(before[-20:]) and _addressed_name(words, j, given):
                n, cue = j + 1, "a given name after a verb that addresses someone"
            elif _ADDRESSING.search(before[-20:]) and len(words) == j + 1 and \
                    _addressed_alone(text, at, at + len(w.group(0))):
                n, cue = j + 1, "a name asked or told something"
            elif _INTRO_ANY.search(before[-30:]) and _name_word(w.group(0)):
                n, cue = j, "introduced by name"
            elif _INTRO_SELF.search(before[-12:]) and w.group(0).casefold() in given and \
                    w.group(0).casefold() not in _CALENDAR:
                n, cue = j + 1, "a given name after I'm"
            else:
                continue
            while n < len(words) and _name_word(words[n].group(0), after_name=n > j):
                n += 1
            if n > j:
                end = m.start() + words[n - 1].end()
                if re.search(r"['’]s$", text[at:end]):
                    end -= 2
                out.append((at, end, cue))
            break
    # the weakest cue last: a span a stronger one found keeps that one's words
    for m in _NAME_ALONE.finditer(text):  # "why does Tomasz always ignore my messages", "what do i get Keisha for …"
        key = m.group(0).casefold()
        if key in given and _zipf(key) < 3.2 and not ordinary(key) and key not in recognizer_data()["not_name_terms"] \
                and near_the_writer(text, m.start(), m.end()):
            out.append((m.start(), m.end(), "a given name beside the writer's own words"))
    seen: set[tuple[int, int]] = set()  # one cue per span: "I'm Hugo and I …" is cued twice
    return [x for x in out if (x[0], x[1]) not in seen and not seen.add((x[0], x[1]))]


#: what marks a sentence as being about code: an identifier with an inner capital or an underscore
#: (SettingWithCopyWarning, getUserById, build_utils), a call ("fetch()"), a path ("/actuator/health"), a UUID
_CODE_TOKEN = re.compile(r"(?<![\w/])(?:[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[A-Za-z]\w*_\w+|\w+\(\)|/[a-z][\w.-]*/[\w./-]*|"
                         r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")

#: a program's message quoted in the sentence ("Why does Terraform say 'Error: Reference to undeclared resource'",
#: "Jest reports 'Cannot use import statement outside a module'"): what says it is a program
_PROGRAM_MESSAGE = re.compile(r"[\"'‘“`](?:Error|Warning|Fatal|Exception|Traceback|Uncaught|Unhandled|Cannot|Can['’]t|"
                              r"Could\s+not|Couldn['’]t|Failed|Unable|Unexpected|Invalid|Missing|Unknown|No\s+such|"
                              r"Permission\s+denied|Segmentation\s+fault|Module\s+not\s+found|Undefined|Deprecated|"
                              r"[A-Z][A-Za-z]{1,40}(?:Error|Exception))\b")


def _sentence_begin(text: str, at: int) -> int:
    """Where the sentence holding `text[at]` begins (see `_sentence`)."""
    a = at
    while a > 0 and (text[a - 1] not in ".!?\n" or text[a - 1] == "\n" and _wrapped(text, a - 1)):
        a -= 1
    return a


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence of `text` around `start`..`end` (a full stop ends one only before a space or the text's end:
    "v2.3" and "e.g." stay inside; a newline only when it does not wrap the sentence's words)."""
    a = _sentence_begin(text, start)
    b = next((k + 1 for k in range(end, len(text)) if text[k] in "!?" or text[k] == "\n" and not _wrapped(text, k) or
              (text[k] == "." and (k + 1 == len(text) or text[k + 1].isspace()))), len(text))
    return text[a:b]


sentence_around = _sentence


def _wrapped(text: str, k: int) -> bool:
    """Whether the newline at `k` only wraps a sentence: a word before it, a lower-case word after it ("on the
    Analytical Engine\ncontain?")."""
    return 0 < k < len(text) - 1 and text[k - 1].isalnum() and text[k + 1].islower()


#: how a question about someone starts: "What did …", "How did …", "Who was …", "Tell me about …"
_QUESTION_START = re.compile(r"(?:what|who|whom|whose|how|why|when|where|which|did|does|was|were|is|has|had|"
                             r"can\s+you\s+(?:tell|explain)|tell\s+me\s+about|explain|"
                             # the same questions in Spanish, French, German, Italian, Portuguese, Dutch, Polish, Turkish
                             r"qué|quién|cómo|cuándo|dónde|por\s+qué|cuál|qui|quoi|comment|pourquoi|quand|où|quel|quelle|"
                             r"wer|was|wie|warum|wann|wo|welche|welcher|chi|cosa|come|perché|quando|dove|quale|qual|"
                             r"quem|como|onde|wat|hoe|waarom|wanneer|waar|welke|kto|dlaczego|kiedy|gdzie|jak|czy|"
                             r"za\s+co|kim|nasıl|neden|nerede|hangi)\b", re.I)
#: an ask about someone that is no question: "Tell me about Serena Williams's career highlights."
_TELL_ME_ABOUT = re.compile(r"(?:tell\s+me|teach\s+me|explain)\s+about\b", re.I)
#: the words by which a message speaks of its writer or their circle ("me" after an asking verb excepted)
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "i'm", "i've",
                           "i'd", "i'll", "im", "we're", "we've"})
_ASKING_ME = frozenset({"tell", "explain", "show", "give", "help", "teach", "remind", "to"})


#: a public life's own words: a question about one asks when they were born, where they lived, whom they married
_LIFE_WORDS = frozenset({"born", "lived", "died", "married", "divorced",
                         # and the family of the life asked about ("her mother, Lady Byron"): a private person's
                         # would be the writer's ("my mother"), which the first person rules out
                         "son", "daughter", "wife", "husband", "mother", "father", "parent", "parents", "brother",
                         "sister", "family", "children", "child", "grandmother", "grandfather"})
#: a conjunction and a short clause before a question's word ("And while you're at it, why is …")
_LEADING_CLAUSE = re.compile(r"^(?:and|but|also|so|then|or|plus)\b[^?.!\n]{0,40}?,\s{1,3}(?=\w)|^(?:and|but|also|so|then|or|plus)\s",
                             re.I)


def asked_about(text: str, h) -> bool:
    """A full name that a short question ties to no one is a public life asked about ("What did Alan Turing do at
    Bletchley Park?", "How did Frida Kahlo's accident shape her painting?", "Tell me about Serena Williams's
    career"): a model can answer it only for a
    person it knows, so the name is what the user asks about. Not in a message that speaks of its writer ("my",
    "we"; "tell me" is the asking), names a person noun ("colleague", "patient", "born") or runs past 280
    characters (a paragraph of context may be anyone's), nor a single word."""
    words = NAME_WORD.findall(h.text)  # a hyphenated name whole: "Bong Joon-ho"
    if len(words) < 2 or len(text) > 280 or not all(w[:1].isupper() or w in PARTICLES for w in words) or \
            not words[-1][:1].isupper() or all(ordinary(w) for w in words):  # "de Moivre": a particle first
        return False
    sentence = _LEADING_CLAUSE.sub("", _sentence(text, h.start, h.end).lstrip(), count=1)
    if not (sentence.rstrip().endswith("?") and _QUESTION_START.match(sentence) or _TELL_ME_ABOUT.match(sentence)):
        return False
    said = [w.casefold().replace("’", "'") for w in re.findall(r"[\w'’]+", text)]
    foreign = other_language(text)  # Polish, Italian … "i" is "and", Spanish "me" no asking of the writer's
    return not any(w in PERSON_WORDS and w not in _LIFE_WORDS or (w in _FIRST_PERSON and not foreign and
                                         not (w == "me" and k and said[k - 1] in _ASKING_ME))
                   for k, w in enumerate(said))



#: the words of one's own affairs: a name in a sentence with one is someone the writer deals with ("Read the Q3
#: Report by Dana Whitfield, due Monday")
_OWN_AFFAIRS = frozenset({"due", "deadline", "deadlines", "meeting", "meetings", "shift", "shifts", "rota", "invoice",
                          "invoices", "appointment", "appointments", "interview", "standup", "stand-up", "sprint", "rent",
                          "lease", "homework", "assignment", "payslip", "salary", "cc", "attendees", "rsvp"})


_WITH_BEFORE = re.compile(r"\b(?:with|w/|ask|tell|remind|email|text|call|invite|thank)[ \t]{1,3}"
                          r"(?:[A-Z][\w'’-]{0,20}(?:[ \t][A-Z][\w'’-]{0,20})?(?:,[ \t]{0,2}|[ \t]{1,2}and[ \t]{1,2}|"
                          r"[ \t]{0,2}&[ \t]{0,2})){0,3}$",
                          re.I)


def near_the_writer(text: str, start: int, end: int) -> bool:
    """Whether the sentence around `start`..`end` speaks of the writer or a person the writer knows: a first person ("why does
    Tomasz ignore my messages", "Aisha's mum invited me"; not the asking "tell me about …"), a person noun ("my
    colleague", "patients"), a word of one's own affairs ("due Monday", "the meeting"), a verb that addresses the
    name ("Ask Mark and Grace") or a "with" before it."""
    if _ADDRESSING.search(text[max(0, start - 20):start]) or _WITH_BEFORE.search(text, max(0, start - 80), start):
        return True  # "reply to Keisha", "splitting the airbnb with Jun-ho and Malak"
    said = [w.casefold().replace("’", "'") for w in re.findall(r"[\w'’-]+", _sentence(text, start, end))
            if w != "US"]  # the country ("the US dollar"), not "us"
    return any(w in PERSON_WORDS or w in _OWN_AFFAIRS or
               w in _FIRST_PERSON and not (w in ("me", "us") and k and said[k - 1] in _ASKING_ME)
               for k, w in enumerate(said))


#: the words that join things compared: "Compare Airflow and Prefect", "Prefect vs Dagster"
_JOINERS = frozenset({"and", "or", "vs", "vs.", "versus", "&"})


#: a sentence about software: two unlisted words compared in it are tools ("for scheduling nightly ETL jobs")
_TECH_SENTENCE = re.compile(r"\b(?:jobs?|schedul\w+|pipelines?|frameworks?|librar(?:y|ies)|databases?|orchestrat\w+|"
                            r"deploy\w*|ETL|APIs?|SDKs?|queues?|clusters?|containers?|servers?|backends?|frontends?|"
                            r"stack|tooling|plugins?|packages?|builds?|CI|workflows?|compil\w+|runtimes?|benchmarks?|"
                            r"latency|throughput|migrations?|ORMs?|quer(?:y|ies)|code|coding|programming|language|"
                            r"developers?|apps?|software|cloud|hosting|framework|editor|IDE|linter|bundler|decorators?|annotations?|"
                            r"methods?|interfaces?|structs?|enums?)\b")


def _unlisted_sibling(text: str, h) -> bool:
    """Whether `h` is joined ("and", "or", "vs", a comma) to a capitalised word that no list holds as a name
    either, in a sentence about software: two such words side by side are tools compared, not people ("Compare
    Airflow and Prefect for scheduling nightly ETL jobs"; not "Compare Kemi and Tunde for the team lead role")."""
    sibling = sibling_word(text, h)
    return bool(sibling) and not listed_name(sibling) and bool(_TECH_SENTENCE.search(_sentence(text, h.start, h.end)))


def sibling_word(text: str, h) -> str:
    """The capitalised word joined to `h` by "and", "or", "vs" or a comma ("Airflow and Prefect", "Machame or
    Lemosho"), or ""."""
    before, after = text[max(0, h.start - 40):h.start].split(), text[h.end:h.end + 40]
    candidates = []
    if before and before[-1].casefold() in _JOINERS and len(before) > 1:
        candidates.append(before[-2])
    elif before and before[-1].endswith(",") and h.start > 0 and text[h.start - 1].isspace():
        candidates.append(before[-1])
    words = after[1:].split() if after.startswith(",") else after.split()[1:] if after[:1].isspace() and \
        after.split()[:1] and after.split()[0].casefold() in _JOINERS else []
    candidates += words[:1]  # ", Machame or Lemosho": the word before is no sibling, the one after is
    for sibling in candidates:
        sibling = sibling.strip(",.;:!?()")
        if sibling[:1].isupper() and sibling.isalpha():
            return sibling
    return ""


#: a verb that reaches someone or posts something, then "on", "via" or "over" and a service: "message my husband on
#: WhatsApp", "find me on LinkedIn", "call me over Teams", "posted it on Reddit": the service is the channel
_CHANNEL_BEFORE = re.compile(r"\b(?:message|messaged|messaging|text|texted|texting|call|called|calling|chat|chatted|"
                             r"dm|dmed|dm['’]d|ping|pinged|reach|reached|contact|contacted|find|found|follow|followed|"
                             r"add|added|post|posted|posting|share|shared|sharing|send|sent|write|wrote|video[- ]call|"
                             r"meet|join|joined|block|blocked|unfollow|unfriend|friend|mention|mentioned|tag|tagged)\b"
                             r"[^.!?\n]{0,40}?\s(?:on|via|over|through)\s+$", re.I)


def channel(text: str, h) -> bool:
    """An organisation's name that a verb of reaching someone or posting puts after "on", "via" or "over": the
    service a message goes through, no one's employer or bank ("message my husband Declan on WhatsApp")."""
    return " " not in h.text.strip() and bool(_CHANNEL_BEFORE.search(text[max(0, h.start - 70):h.start]))


#: Python's own decorators (the language's and its standard library's)
_DECORATORS = frozenset({"property", "staticmethod", "classmethod", "dataclass", "abstractmethod", "cached_property",
                         "lru_cache", "cache", "wraps", "override", "overload", "contextmanager", "asynccontextmanager",
                         "total_ordering", "final", "singledispatch", "singledispatchmethod", "setter", "getter"})


#: the languages and frameworks that write annotations or attributes with "@", named in a sentence
_ANNOTATED_LANGUAGE = re.compile(r"\b(?:Swift|Kotlin|Java|Python|TypeScript|Angular|Spring|Dart|Flutter|JUnit|C#)\b")
#: words that credit a handle right before it ("thanks @maria", "by @JohnSmith")
_CREDITED = re.compile(r"\b(?:by|from|cc|thanks|via)\s+$", re.I)


def annotation(text: str, h) -> bool:
    """An "@" word with a capital first ("@MainActor", "@Override", "@SpringBootApplication"), one of Python's
    decorators ("@dataclass") or one a call or a dot follows ("@app.route(", "@pytest.fixture") in a sentence about
    code: an annotation, an attribute or a decorator of a language, not a handle; unless a verb addresses it or
    "by", "from" or "cc" comes before it ("ask @JohnSmith about getUser()")."""
    value = h.text.strip()
    word = value[1:] if value.startswith("@") else value if text[h.start - 1:h.start] == "@" else ""
    if not word.replace("_", "").isalnum() or not (word[:1].isupper() or word in _DECORATORS or
                                                   text[h.end:h.end + 1] in ("(", ".")):
        return False  # "@dataclass", "@app.route(…)", "@pytest.fixture": Python's decorators are lower case
    if word[1:].islower() and listed_name(word):
        return False  # "@Mateus here's the prod key": a given name, a colleague's handle in a chat
    at = h.start - (not value.startswith("@"))
    sentence = _sentence(text, at, h.end).replace("@" + word, " ")  # the word itself says nothing of its sentence
    if not (_CODE_TOKEN.search(sentence) or _TECH_SENTENCE.search(sentence) or _ANNOTATED_LANGUAGE.search(sentence)):
        return False
    before = text[max(0, at - 20):at]
    return not _ADDRESSING.search(before) and not _CREDITED.search(before)


def code_product(text: str, h) -> bool:
    """A single capitalised word that no list holds as a name, in a sentence about code ("Why does Pandas warn
    SettingWithCopyWarning …", "call /actuator/health from Postman"), one that quotes a program's message ("Why
    does Jest report 'Cannot use import statement …'") or beside another such word ("Compare Airflow
    and Prefect"): a tool's name. Not one with a possessive or a
    person's word next to it, nor after a verb that addresses or hands something to someone ("ask Chiamaka to review
    getUserById", "Olamide's PR broke build_utils")."""
    value = h.text.strip()
    if " " in value or not value[:1].isupper() or value.isupper():
        return False
    if listed_name(value):
        return False
    if re.match(r"['’]s\b", text[h.end:h.end + 3]) or not (
            _CODE_TOKEN.search(sentence := _sentence(text, h.start, h.end)) or _PROGRAM_MESSAGE.search(sentence) or
            _unlisted_sibling(text, h)):
        return False
    near = [w.casefold() for w in _WORD.findall(text[max(0, h.start - 30):h.start])[-3:]]
    before = text[max(0, h.start - 40):h.start]
    return not any(w in _POSSESSIVES or w in PERSON_WORDS for w in near) and \
        not _TWO_OBJECTS.search(before) and not _ADDRESSING.search(before[-20:]) and not _KIN_BEFORE.search(before)

