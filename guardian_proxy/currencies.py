"""Currencies: ISO 4217 codes (with the pre-euro ones judgments still cite), symbols and words, as regex
alternations. Shared by the narrative recognizers (extract/narrative.py: a money amount is a quasi-identifier) and
the anonymizer's residue scan (anonymize/residue.py: a currency's name is no residue), which may not import each
other's stage."""

#: ISO 4217 codes and a few older ones that still appear in documents
CURRENCY_CODES = ("EUR|USD|GBP|CHF|JPY|CNY|INR|AUD|CAD|NZD|SEK|NOK|DKK|PLN|CZK|HUF|RON|BGN|HRK|RUB|UAH|TRY|TRL|"
                  "ATS|DEM|FRF|ITL|ESP|NLG|BEF|FIM|GRD|IEP|PTE|ZAR|BRL|MXN|ARS|PHP|SGD|HKD|KRW|IDR|MYR|THB|"
                  "VND|PKR|BDT|LKR|NGN|KES|EGP|ILS|AED|SAR|ECU|CYP|MTL|SKK|SIT|LTL|LVL|EEK|ISK|GEL|AMD|AZN|MDL")
CURRENCY_SYMBOLS = "€$£¥₹₺₽₩₱₦₪"
CURRENCY_WORDS = ("euros?|dollars?|pounds?(?: sterling)?|(?:new )?(?:turkish )?liras?|lire|kronor|kronur|krona|"
                  "kroner|zlot(?:y|ys|ies)|schillings?|(?:gdr |german )?marks|francs?|rupees?|pesos?|yen|yuan|rubles?|"
                  "roubles?|hryvnias?|forints?|korunas?|lei|leva|levs?|dinars?|dirhams?|rand|reais|real|pence|cents?|"
                  "ecus?|drachmas?|escudos?|pesetas?|guilders?|shillings?|naira|rupiah|baht|ringgit|won")
