"""Health data: medications and medical conditions by word lookup (one linear tokenisation, then set
membership for single words and two/three-word terms), plus context phrases ("diagnosed with …",
"taking … mg"). Complements the narrative recognizers' condition patterns with the medication side."""

from __future__ import annotations

import re

from .patterns import Hit

MEDICATIONS = frozenset("""
acetaminophen paracetamol ibuprofen naproxen aspirin diclofenac celecoxib tramadol codeine morphine oxycodone
hydrocodone fentanyl buprenorphine methadone naloxone gabapentin pregabalin metformin insulin glipizide glyburide
sitagliptin empagliflozin dapagliflozin liraglutide semaglutide ozempic wegovy mounjaro tirzepatide atorvastatin
simvastatin rosuvastatin pravastatin lisinopril enalapril ramipril losartan valsartan amlodipine nifedipine
metoprolol atenolol propranolol carvedilol bisoprolol hydrochlorothiazide furosemide spironolactone warfarin
apixaban rivaroxaban dabigatran clopidogrel heparin levothyroxine synthroid prednisone prednisolone
dexamethasone hydrocortisone methotrexate adalimumab humira etanercept infliximab rituximab tamoxifen letrozole
anastrozole trastuzumab herceptin pembrolizumab keytruda imatinib sertraline zoloft fluoxetine prozac
citalopram escitalopram lexapro paroxetine venlafaxine duloxetine bupropion wellbutrin mirtazapine trazodone
amitriptyline nortriptyline lithium lamotrigine valproate depakote carbamazepine levetiracetam keppra topiramate
phenytoin quetiapine seroquel olanzapine risperidone aripiprazole abilify haloperidol clozapine lurasidone
diazepam valium lorazepam ativan alprazolam xanax clonazepam klonopin zolpidem ambien melatonin methylphenidate
ritalin concerta adderall amphetamine lisdexamfetamine vyvanse atomoxetine modafinil donepezil memantine
levodopa carbidopa sumatriptan rizatriptan omeprazole esomeprazole pantoprazole lansoprazole ranitidine
famotidine ondansetron metoclopramide loperamide amoxicillin augmentin azithromycin doxycycline ciprofloxacin
levofloxacin cephalexin clindamycin metronidazole nitrofurantoin penicillin vancomycin fluconazole acyclovir
valacyclovir oseltamivir tamiflu paxlovid truvada descovy biktarvy prep emtricitabine tenofovir efavirenz
dolutegravir albuterol salbutamol ventolin fluticasone budesonide montelukast singulair tiotropium cetirizine
loratadine fexofenadine diphenhydramine epinephrine epipen sildenafil viagra tadalafil cialis finasteride
estradiol progesterone testosterone norethindrone levonorgestrel mifepristone misoprostol clomiphene letrozole
isotretinoin accutane tretinoin minoxidil allopurinol colchicine alendronate naltrexone disulfiram acamprosate
varenicline chantix nicotine suboxone antidepressant antidepressants antibiotics antipsychotic antipsychotics
antiretroviral antiretrovirals opioids painkillers contraceptive contraceptives statins inhaler insulin-pump
heroin diamorphine cocaine cannabis marijuana hashish methamphetamine mdma opium ketamine mephedrone
calpol nurofen calprofen panadol tylenol advil motrin aleve benadryl piriton piriteze zyrtec claritin allegra
sudafed lemsip beechams gaviscon rennie imodium dioralyte movicol canesten daktarin bonjela anbesol strepsils
otrivine beconase flixonase nytol kalms feminax buscopan co-codamol solpadeine ventolin seretide symbicort clenil
""".split())

CONDITIONS = frozenset("""
hypertension hypotension arrhythmia angina cardiomyopathy diabetic prediabetes hypothyroidism hyperthyroidism
endometriosis pcos infertility menopause erectile dysfunction psoriasis eczema lupus fibromyalgia gout
osteoporosis osteoarthritis arthritis crohn's colitis ibs celiac coeliac cirrhosis hiv-positive chlamydia
gonorrhea syphilis herpes hpv std sti pregnancy ocd bipolar anorexia bulimia bpd schizophrenic depressed suicidal
self-harm dyslexia dyspraxia tourette's sclerosis ms als copd emphysema bronchitis apnea narcolepsy glaucoma
cataracts macular covid covid-19 chemotherapy chemo radiotherapy dialysis transplant abortion ivf pregnant trimester
miscarried stillbirth postpartum mastectomy melanoma lymphoma carcinoma sarcoma
sciatica hernia herniated tinnitus vertigo incontinence epileptic psychotic paranoid myopic paraplegic tetraplegic
quadriplegic amputee prosthesis prostheses prosthetic calcification reconstructive
""".split())

TERMS = frozenset({
    "heart disease", "heart failure", "kidney disease", "kidney failure", "liver disease", "sleep apnea",
    "multiple sclerosis", "panic attacks", "panic disorder", "eating disorder", "substance abuse", "opioid use",
    "blood pressure", "high blood pressure", "type 1 diabetes", "type 2 diabetes", "breast cancer",
    "prostate cancer", "lung cancer", "mental health", "sexually transmitted", "birth control", "morning after",
    "weight loss", "hiv positive", "erectile dysfunction", "crohn's disease", "celiac disease", "long covid",
    "loss of vision", "loss of sight", "loss of hearing", "vision loss", "hearing loss", "gave birth", "given birth",
    "giving birth", "give birth", "gives birth",
})

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’]{0,40}")
_DOSE = re.compile(r"(?<![\w.])\d{1,4}(?:\.\d{1,3})?\s?(?:mg|mcg|µg|ml|iu|units)\b", re.I)
_DIAG = re.compile(r"(?i)\b(?:diagnosed with|suffer(?:s|ing)? from|prescribed|treated for|living with)\s"
                   r"(?P<v>[A-Za-z0-9][A-Za-z0-9'’-]{0,29}(?: [A-Za-z0-9][A-Za-z0-9'’-]{0,29}){0,2})")
#: a side of someone's body ("his left eye", "the applicant’s right knee", "in the left orbital area"): where an injury,
#: a condition or an operation is, which a body part alone does not say; not a direction ("the right hand side")
_BODY_SIDE = re.compile(r"(?i)(?:\b(?:his|her|their|my|your|its|the|a)|[’']s)\s+(?P<v>(?:left|right)\s+"
                        r"(?:(?!(?:to|of|and|or|in|on|at|for|by|with|from|as)\s)[a-z]+\s+)?"
                        r"(?:eyes?|ears?|knees?|legs?|arms?|hands?|foot|feet|hip|shoulder|kidney|lung|wrist|ankle|"
                        r"elbow|thigh|temple|cheek|orbital\s+area|breast|ribs?|fingers?|toes?))\b"
                        r"(?!\s*(?:side|corner|column|lane|margin|turn|drive)\b)")
_STOP = frozenset("it a an the my this that his her their something nothing".split())
#: an indefinite article after a diagnosis is not part of the condition ("diagnosed with a psychotic illness")
_ARTICLE = frozenset({"a", "an"})
#: a condition or a drug never starts with a preposition or a conjunction: after one, the trigger is the legal
#: or procedural sense ("the period prescribed by domestic law", "prescribed in section 11", "treated for as long as")
_FUNCTION = frozenset("by in under within at to as than of on from with for into upon onto pursuant according "
                      "and or nor but if whether when where while because".split())
#: "prescribed" after a determiner is an adjective ("the prescribed time-limit", "within the prescribed period"):
#: a rule's requirement, not a prescription
_ADJECTIVAL = re.compile(r"(?i)\b(?:the|a|an|any|its|their|this|that|such|each|every|no)\s+$")
_TAIL = frozenset("last next this year years month months week weeks ago and but since in on at for when which that "
                  "who recently today yesterday so because".split())


#: condition abbreviations that are also ordinary tokens ("Ms Smith" a title, "120 ms" a duration, German "als"):
#: a condition only written in capitals ("MS", "ALS") and not before a capitalised word (a title before a name, "MS Word")
_AMBIGUOUS = frozenset({"ms", "als"})
_NAME_AFTER = re.compile(r"(?<![ \t])[ \t]+[A-Z][a-z]")  # anchored at a run's first blank: linear under search too


def _abbreviation_ok(text: str, s: int, e: int) -> bool:
    return text[s:e].isupper() and not _NAME_AFTER.match(text, e)


def find(text: str) -> list[Hit]:
    out: list[Hit] = []
    words = [(m.start(), m.end(), m.group().lower().replace("’", "'")) for m in _WORD.finditer(text)]
    for i, (s, e, w) in enumerate(words):
        if w in MEDICATIONS:  # above NER's 0.85: a drug's name the list holds is no person nor company ("Calpol")
            out.append((s, e, "MEDICATION", 0.86))
        elif w in CONDITIONS and (w not in _AMBIGUOUS or _abbreviation_ok(text, s, e)):
            out.append((s, e, "MEDICAL_CONDITION", 0.7))
        if i + 1 < len(words) and text[e : words[i + 1][0]] == "-":  # hyphenated: self-harm, covid-19
            compound = w + "-" + words[i + 1][2]
            if compound in CONDITIONS or compound in MEDICATIONS:
                out.append((s, words[i + 1][1], "MEDICATION" if compound in MEDICATIONS else "MEDICAL_CONDITION", 0.7))
        for n in (2, 3):
            if i + n <= len(words):
                phrase = " ".join(x[2] for x in words[i : i + n])
                if phrase in TERMS:
                    out.append((s, words[i + n - 1][1], "MEDICAL_CONDITION", 0.75))
    for m in _DOSE.finditer(text):
        before = text[max(0, m.start() - 30): m.start()]
        if out and any(h[2] == "MEDICATION" and h[1] <= m.start() and h[1] >= m.start() - 30 for h in out) or \
                "take" in before.lower() or "dose" in before.lower():
            out.append((m.start(), m.end(), "MEDICATION", 0.6))
    for m in _BODY_SIDE.finditer(text):
        out.append((m.start("v"), m.end("v"), "MEDICAL_CONDITION", 0.6))
    for m in _DIAG.finditer(text):
        words = m.group("v").split(" ")
        start = m.start("v")
        if words[0].lower() in _ARTICLE and len(words) > 1 and m.group().lower().startswith(("diagnosed", "treated")):
            # "diagnosed with a psychotic illness"; not "suffering from a lack of funds"
            start += len(words[0]) + 1
            words = words[1:]
        if words[0].lower() in _STOP or words[0].lower() in _FUNCTION:
            continue
        if m.group().lower().startswith("prescribed") and _ADJECTIVAL.search(text[max(0, m.start() - 12): m.start()]):
            continue
        keep = 1
        while keep < len(words) and words[keep].lower() not in _TAIL and words[keep].lower() not in _FUNCTION:
            keep += 1
        out.append((start, start + len(" ".join(words[:keep])), "MEDICAL_CONDITION", 0.65))
    return out
