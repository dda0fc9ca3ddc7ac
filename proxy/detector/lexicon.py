"""Word classes for the learned layer, and the spelling repair that maps near-misses onto them.

The model's weights for word classes are learned like any other feature; the classes let what
it learned from "ignore previous instructions" carry over to "disregard prior directives",
which a bag of words trained on a few templates would not; the classes also hold the
equivalent words of German, French, Spanish, Italian and Portuguese, so what was learned from
English carries over to "ignoriere die vorherigen Anweisungen". Misspellings of the class words
("iunstructions", "instuctions", "disreagrd") are repaired first: a typo is a cheap way past
an exact-word feature, and a benchmark's own templates contain them.
"""

from __future__ import annotations

import functools

ENGLISH: dict[str, tuple[str, ...]] = {
    "IGNORE": ("ignore", "ignoring", "disregard", "disregarding", "forget", "override",
               "overrule", "bypass", "abandon", "discard", "dismiss", "nevermind", "supersede",
               "neglect", "skip", "omit"),
    "PRIOR": ("previous", "prior", "above", "earlier", "preceding", "initial", "original",
              "former", "foregoing", "before", "existing", "old", "past"),
    "INSTR": ("instruction", "instructions", "directions", "directive", "directives", "rules",
              "guidelines", "prompt", "prompts", "commands", "orders", "guidance", "programming",
              "constraints", "restrictions", "policies", "policy", "task", "tasks", "objective"),
    "AI": ("ai", "assistant", "chatbot", "bot", "llm", "gpt", "chatgpt", "claude", "gemini",
           "copilot", "agent", "model", "bard", "llama"),
    "YOU": ("you", "your", "yourself", "yours", "u"),
    "NOW": ("now", "henceforth", "onwards", "onward", "instead", "anymore", "immediately",
            "forthwith"),
    "ROLE": ("act", "acting", "pretend", "roleplay", "role", "persona", "character", "mode",
             "operating", "simulate", "become", "behave", "impersonate", "embody"),
    "UNBOUND": ("unrestricted", "unfiltered", "uncensored", "limits", "limitless", "unlimited",
                "boundaries", "jailbreak", "jailbroken", "freedom", "unbound", "unchained",
                "amoral", "unethical", "filters", "censorship", "anything"),
    "SAY": ("say", "print", "output", "reply", "respond", "repeat", "write", "answer", "echo",
            "display", "type", "state"),
    "SEND": ("send", "email", "forward", "transfer", "post", "upload", "share", "leak",
             "exfiltrate", "wire", "pay", "invite", "delete", "reserve", "book"),
    "SECRET": ("password", "secret", "secrets", "credentials", "token", "tokens", "apikey",
               "private", "confidential", "ssh"),
    "HIDE": ("secretly", "silently", "covertly", "quietly", "hidden", "conceal", "unnoticed"),
    "URGENT": ("important", "urgent", "attention", "must", "mandatory", "required", "critical",
               "crucial", "essential", "immediately"),
    "AUTHORITY": ("system", "admin", "administrator", "developer", "root", "sudo", "operator",
                  "maintenance", "debug", "owner", "creator", "openai", "anthropic"),
    "USER": ("user", "human", "customer", "requester"),
}

# The words of German, French, Spanish, Italian and Portuguese that play the English words'
# parts, so the class weights learned from English carry over to injections written in those
# languages (the training corpora have next to no text in them). Written as the model's tokens
# are: case-folded (German ß as "ss"), accents kept (NFKC composes them), with the unaccented
# spelling too where people often type it. Left out on purpose: words shorter than three
# letters; function words that are frequent in benign text ("Sie", "de", "su", "seu", "lei",
# "ora"); words that are also English or code words ("client", "dis", "tue", "handle",
# "reserve", "gib" as in GiB); words whose English class word has a strong negative weight of
# its own that the foreign word would not share ("commands", "model", "agent", "output",
# "type", "share", "required", "limits", "filters", "root": "Befehle", "modelo", "filtros",
# ...); Spanish, Italian and Portuguese forms of "say" verbs that are also the third person in
# a change log ("responde", "imprime", "stampa": "now prints" would score like "now print"; the
# delete verbs "borra", "elimina" are kept, as "send" and "delete" are in English); the
# tu-form of "write" in Spanish ("escribe": "describe" is one letter from it); "passwort",
# which the repair already makes "password".
OTHER_LANGUAGES: dict[str, dict[str, tuple[str, ...]]] = {
    "de": {
        "IGNORE": ("ignoriere", "ignorieren", "ignoriert", "vergiss", "vergesst", "vergessen",
                   "missachte", "missachten", "missachtet", "verwirf", "verwerfen",
                   "übergehe", "übergehen"),
        "PRIOR": ("vorherigen", "vorherige", "bisherigen", "bisherige", "obigen", "obige",
                  "früheren", "frühere", "vorangegangenen", "vorigen", "ursprünglichen",
                  "ursprüngliche"),
        "INSTR": ("anweisungen", "anweisung", "instruktionen", "regeln", "richtlinien",
                  "vorgaben", "anordnungen", "einschränkungen", "aufgabe", "aufgaben"),
        "AI": ("assistent", "assistentin", "sprachmodell"),
        "YOU": ("dich", "dein", "deine", "deinen", "deinem", "deiner"),
        "NOW": ("jetzt", "stattdessen", "fortan", "künftig"),
        "ROLE": ("rolle", "modus", "verhalte", "agiere", "simuliere"),
        "UNBOUND": ("uneingeschränkt", "ungefiltert", "unzensiert", "zensur"),
        "SAY": ("antworte", "antworten", "schreibe", "wiederhole"),
        "SEND": ("sende", "senden", "schicke", "schicken", "weiterleiten", "überweise",
                 "überweisen", "ueberweise", "lösche", "löschen", "loesche", "loeschen",
                 "übertrage", "zahle"),
        "SECRET": ("passwörter", "kennwort", "geheimnis", "geheim", "geheime",
                   "geheimen", "zugangsdaten", "anmeldedaten", "vertraulich", "vertrauliche",
                   "vertraulichen"),
        "HIDE": ("heimlich", "unbemerkt", "stillschweigend"),
        "URGENT": ("wichtig", "wichtige", "dringend", "dringende", "sofort", "unbedingt",
                   "achtung"),
        "AUTHORITY": ("entwickler", "betreiber"),
        "USER": ("benutzer", "benutzers", "nutzer", "nutzers", "anwender", "kunde", "kunden"),
    },
    "fr": {
        "IGNORE": ("ignorez", "ignorer", "oublie", "oubliez", "oublier", "contourne",
                   "contournez", "outrepasse", "outrepassez", "négligez"),
        "PRIOR": ("précédentes", "précédents", "précédente", "precedentes", "antérieures",
                  "antérieurs", "anterieures", "dessus", "initiales"),
        "INSTR": ("consignes", "règles", "regles", "directive", "ordres", "tâche", "tâches"),
        "AI": ("assistante",),
        "YOU": ("vous", "votre", "vos", "toi"),
        "NOW": ("maintenant", "désormais", "desormais", "dorénavant", "dorenavant"),
        "ROLE": ("agis", "agissez", "semblant", "prétends", "prétendez", "rôle", "incarne",
                 "incarnez", "simulez", "comportez"),
        "UNBOUND": ("illimité", "illimitée"),
        "SAY": ("dites", "écris", "écrivez", "répétez", "affichez", "réponds", "répondez"),
        "SEND": ("envoie", "envoyez", "envoyer", "transfère", "transférez", "transférer",
                 "transferez", "transmets", "transmettez", "transmettre", "supprimez",
                 "supprimer", "payez"),
        "SECRET": ("identifiants", "secrète", "secrètes", "confidentiel", "confidentielle",
                   "confidentielles", "confidentiels", "jeton", "jetons"),
        "HIDE": ("secrètement", "secretement", "discrètement", "discretement",
                 "silencieusement"),
        "URGENT": ("importante", "urgente", "immédiatement", "immediatement",
                   "impérativement", "devez"),
        "AUTHORITY": ("système", "administrateur", "développeur", "developpeur"),
        "USER": ("utilisateur", "utilisatrice", "utilisateurs"),
    },
    "es": {
        "IGNORE": ("ignora", "ignorar", "ignore", "olvida", "olvide", "olvidar", "omite",
                   "omitir", "descarta", "descarte", "omiso"),
        "PRIOR": ("anteriores", "anterior", "previas", "precedentes", "arriba"),
        "INSTR": ("instrucciones", "indicaciones", "directivas", "directrices", "reglas",
                  "órdenes", "normas", "restricciones", "tarea", "tareas"),
        "AI": ("asistente",),
        "YOU": ("usted", "ustedes", "tus"),
        "NOW": ("ahora",),
        "ROLE": ("actúa", "actua", "actúe", "finge", "fingir", "modo", "simula", "compórtate",
                 "rol"),
        "UNBOUND": ("ilimitado", "ilimitada", "censura"),
        "SAY": ("dime", "escriba", "responda", "repita", "imprima"),
        "SEND": ("envía", "envia", "envíe", "envie", "enviar", "reenvía", "reenvia",
                 "reenviar", "transfiere", "transferir", "borra", "borre", "elimina", "elimine"),
        "SECRET": ("contraseña", "contraseñas", "contrasena", "credenciales",
                   "secreto", "secreta", "secretos", "confidencial", "confidenciales"),
        "HIDE": ("secretamente", "silenciosamente", "discretamente", "sigilosamente"),
        "URGENT": ("importante", "urgente", "inmediatamente", "debes", "atención",
                   "atencion"),
        "AUTHORITY": ("sistema", "administrador", "desarrollador", "desarrolladores"),
        "USER": ("usuario", "usuarios"),
    },
    "it": {
        "IGNORE": ("ignora", "ignorare", "ignorate", "dimentica", "dimenticare", "dimenticate",
                   "trascura", "tralascia", "scarta", "aggira"),
        "PRIOR": ("precedenti", "precedente", "anteriori", "sopra"),
        "INSTR": ("istruzioni", "istruzione", "regole", "direttive", "indicazioni",
                  "restrizioni", "compito", "compiti"),
        "AI": ("assistente",),
        "YOU": ("tuo", "tua", "tuoi", "vostro", "vostra", "vostri", "vostre"),
        "NOW": ("adesso", "invece"),
        "ROLE": ("agisci", "fingi", "finta", "ruolo", "modalità", "modalita", "comportati",
                 "impersona"),
        "UNBOUND": ("illimitato", "illimitata", "censura"),
        "SAY": ("scrivi", "rispondi", "ripeti", "dimmi"),
        "SEND": ("invia", "inviare", "inoltra", "inoltrare", "trasferisci",
                 "trasferire", "cancella", "cancellare", "elimina", "eliminare"),
        "SECRET": ("segreto", "segreta", "segreti", "credenziali", "riservato", "riservata",
                   "riservati", "confidenziale", "confidenziali"),
        "HIDE": ("segretamente", "silenziosamente", "discretamente"),
        "URGENT": ("importante", "urgente", "immediatamente", "subito", "attenzione", "devi"),
        "AUTHORITY": ("sistema", "amministratore", "sviluppatore", "sviluppatori"),
        "USER": ("utente", "utenti"),
    },
    "pt": {
        "IGNORE": ("ignora", "ignorar", "ignore", "esqueça", "esqueca", "esquecer",
                   "desconsidere", "desconsiderar", "desconsidera", "omita", "descarte"),
        "PRIOR": ("anteriores", "anterior", "prévias", "previas", "acima"),
        "INSTR": ("instruções", "instrucoes", "instrução", "regras", "diretrizes",
                  "diretivas", "orientações", "orientacoes", "ordens", "restrições", "tarefa",
                  "tarefas"),
        "AI": ("assistente",),
        "YOU": ("você", "voce", "vocês", "voces"),
        "NOW": ("agora",),
        "ROLE": ("aja", "finja", "fingir", "modo"),
        "UNBOUND": ("ilimitado", "ilimitada", "censura"),
        "SAY": ("diga", "escreva", "responda", "repita", "imprima"),
        "SEND": ("envie", "envia", "enviar", "encaminhe", "encaminhar", "transfira",
                 "transferir", "exclua", "apague"),
        "SECRET": ("senha", "senhas", "segredo", "segredos", "credenciais", "confidencial",
                   "confidenciais", "sigiloso", "sigilosa"),
        "HIDE": ("secretamente", "silenciosamente", "discretamente", "sigilosamente"),
        "URGENT": ("importante", "urgente", "imediatamente", "atenção", "atencao"),
        "AUTHORITY": ("sistema", "administrador", "desenvolvedor", "desenvolvedores"),
        "USER": ("usuário", "usuários", "usuario", "utilizador"),
    },
}


def _merged() -> dict[str, tuple[str, ...]]:
    """English first, then each language's words not already in a class, in order."""
    merged = {cls: list(words) for cls, words in ENGLISH.items()}
    seen = {word for words in ENGLISH.values() for word in words}
    for table in OTHER_LANGUAGES.values():
        for cls, words in table.items():
            for word in words:
                if word not in seen:
                    seen.add(word)
                    merged[cls].append(word)
    return {cls: tuple(words) for cls, words in merged.items()}


CLASSES: dict[str, tuple[str, ...]] = _merged()
CLASS_OF: dict[str, str] = {word: cls for cls, words in CLASSES.items() for word in words}
_ENGLISH_WORDS = frozenset(word for words in ENGLISH.values() for word in words)
# Class words of the other languages that are one letter from English words of the benign
# training text ("ignorer": "ignored", "ignores"; "importante": "importance"; "directrices":
# "directories"; "esqueca": Spanish "esquema"): they are matched as spelled, and their
# one-letter variants are not added to the repair table, so no English word is repaired into
# them (tests/test_detector_multilingual.py checks a list of common English words).
_EXACT = frozenset({
    "ignorer", "oublier", "precedente", "directrices", "anterior", "transmets", "initiales",
    "importante", "secreta", "secreto", "eliminare", "assistante", "esqueca", "transferez",
    "sistema", "escreva", "escriba", "amministratore", "incarne", "ignorez", "schicken",
    "precedenti", "esqueça", "transfiere", "système", "schicke",
})
_MIN_REPAIR = 7  # shorter words are too close to other words for a one-letter repair


def _deletes(word: str) -> list[str]:
    """One letter removed, in order of position (a list: a set's order would change from one
    process to the next, and so would the repair)."""
    return [word[:i] + word[i + 1:] for i in range(len(word))]


_MAX_REPAIR = max(len(w) for w in CLASS_OF)
MAX_REPAIRED = _MAX_REPAIR + 1  # repair() leaves longer tokens as they are
_REPAIRS: dict[str, str] = {}
# English words first: a variant that an English and another language's class word share
# repairs to the English one, as it did before the other languages were added.
for _word in sorted(CLASS_OF, key=lambda w: (w not in _ENGLISH_WORDS, len(w), w)):
    if len(_word) >= _MIN_REPAIR and _word not in _EXACT:
        for _variant in _deletes(_word):
            _REPAIRS.setdefault(_variant, _word)


@functools.lru_cache(maxsize=65536)
def repair(token: str) -> str:
    """The class word `token` misspells by one letter (added, missing or changed), or itself."""
    if token in CLASS_OF or not _MIN_REPAIR - 1 <= len(token) <= MAX_REPAIRED:
        return token  # too short, or longer than any class word plus one letter
    found = _REPAIRS.get(token)  # a letter missing
    if found is not None:
        return found
    for variant in _deletes(token):
        found = CLASS_OF.get(variant) if len(variant) >= _MIN_REPAIR else None  # one extra
        if found is not None:
            return variant
        found = _REPAIRS.get(variant)  # one changed (or swapped neighbours' half)
        if found is not None:
            return found
    return token


def repair_tables() -> tuple[dict[str, str], dict[str, str], int, int]:
    """What repair() reads, for its C copy (_native.Repairer): the class words, the class
    words with one letter missing, the shortest class word repaired to and the longest token
    repaired."""
    return CLASS_OF, _REPAIRS, _MIN_REPAIR, MAX_REPAIRED
