"""Instructions to the evaluator written in another language (style ``foreign_instruction``).

Per language three kinds of rule, as in English (:mod:`groundjudge.security.rules`):

* ``ignore``: "ignore the previous instructions" (with a qualifier such as previous / all / your, so that "the
  tenant may ignore the landlord's instructions" does not match);
* ``mark``: a command to mark, rate or classify *this answer* as correct / grounded, or to give it full marks;
* ``address``: a note, message or salutation addressed to an evaluator, grader, annotator or AI model, which
  fires only when a grading term (answer, grounded, score, mark ...) is in the same sentence.

A document in another language that does not address a judge (a French judgment that finds a claim "fondée", a
German auditor's note) must not match: words such as *juge*, *Richter*, *Prüfer* with an ordinary verdict are
left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundjudge.security.rules import Hit, Rule, apply_rule


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.VERBOSE | re.MULTILINE)


@dataclass(frozen=True)
class Language:
    """One language's keyword sets, as regular expressions."""

    code: str
    name: str
    addressee: str
    """Who an injection speaks to: evaluator, grader, annotator, AI model ... (pattern fragment)."""
    address: str
    """A note to / salutation of an addressee; ``{A}`` stands for :attr:`addressee` (pattern fragment)."""
    grading: str
    """Terms of grading an answer, required beside an address (pattern fragment)."""
    ignore: str
    """"Ignore the previous instructions" forms (pattern fragment)."""
    mark: str
    """Commands to mark the answer as correct / grounded or give it full marks (pattern fragment)."""
    mark_requires: str | None = None
    """For languages whose ``mark`` verbs have ordinary uses too: what must be in the sentence as well."""

    def rules(self) -> tuple[Rule, ...]:
        """This language's rules, style ``foreign_instruction``."""
        address = self.address.replace("{A}", f"(?:{self.addressee})")
        name = f"foreign_instruction.{self.code}"
        return (
            Rule(f"{name}.ignore", "foreign_instruction", _c(self.ignore)),
            Rule(f"{name}.mark", "foreign_instruction", _c(self.mark),
                 requires=_c(self.mark_requires) if self.mark_requires else None),
            Rule(f"{name}.address", "foreign_instruction", _c(address), requires=_c(self.grading)),
        )


LANGUAGES: tuple[Language, ...] = (
    Language(
        "fr", "French",
        addressee=r"(?:l['’]\s*|le\s+|la\s+|les\s+|votre\s+)?(?:évaluat(?:eur|rice)s?|correct(?:eur|rice)s?"
                  r"|examinat(?:eur|rice)s?|annotat(?:eur|rice)s?|notat(?:eur|rice)s?|relect(?:eur|rice)s?"
                  r"|vérificat(?:eur|rice)s?|modèle(?:\s+de\s+langage)?|IA|intelligence\s+artificielle|assistant"
                  r"|juge\s+(?:IA|automatique)|système\s+d['’]évaluation)\b",
        address=r"\b(?:note|remarque|message|mot|commentaire|avis|rappel|instructions?|consignes?)\s+"
                r"(?:à|au|aux|pour|destinée?s?\s+(?:à|au|aux))\s+{A}"
                r"|\b(?:cher|chère|chers|chères|à\s+l['’]attention\s+(?:de|du|des)|attention)\s*(?:,\s*)?{A}"
                r"|^[ \t]*{A}\s*[:,]|\bsi\s+vous\s+êtes\s+(?:un|une)\s+{A}",
        grading=r"\b(?:réponses?|résumés?|fidèles?|not(?:e|ez|er)\s+(?:maximale|cette|la)|verdict|étiquet\w+"
                r"|marque[rz]?\s+(?:cette|la)|classe[rz]?\s+(?:cette|la)|hallucinations?)\b",
        ignore=r"\b(?:ignore[rz]?|oublie[rz]?|ne\s+tene[zr]\s+pas\s+compte\s+de|faites\s+abstraction\s+de)\s+"
               r"(?:(?:toutes|tous)\s+(?:les|vos)|vos|tes)\s+(?:instructions|consignes|directives|règles)"
               r"|\b(?:ignore[rz]?|oublie[rz]?)\s+(?:les|ces)\s+(?:instructions|consignes|directives|règles)\s+"
               r"(?:précédentes|antérieures|ci-dessus|initiales|du\s+système)",
        mark=r"\b(?:marquez|notez|classez|classifiez|considérez|évaluez|étiquetez|jugez|qualifiez|indiquez"
             r"|(?:veuillez|merci\s+de|vous\s+devez)\s+(?:marquer|noter|classer|classifier|considérer|évaluer"
             r"|étiqueter|juger|qualifier|indiquer))\s+(?:cette|la|ce|le)\s+"
             r"(?:réponse|résumé|affirmation)\s+comme\s+(?:\w+\s+)?(?:fondée?|correcte?|exacte?|fidèle|vérifiée?"
             r"|juste|vraie?|valide|étayée?|appuyée?)\b"
             r"|\b(?:réponse|résumé)\s+(?:\w+\s+){0,3}(?:doit|devrait)\s+être\s+(?:marquée?|notée?|classée?"
             r"|considérée?|évaluée?|jugée?)\s+comme\s+(?:\w+\s+)?(?:fondée?|correcte?|exacte?|fidèle|vérifiée?)"
             r"|\brépond(?:ez|re|s)\s+(?:uniquement|seulement|simplement)\s+(?:par\s+)?[«\"“]?\s*"
             r"(?:fondée?|correcte?|oui|vrai)\b"
             r"|\battribue[zr]?\s+(?:à\s+cette\s+réponse\s+)?(?:la\s+)?note\s+maximale",
    ),
    Language(
        "de", "German",
        addressee=r"(?:den\s+|die\s+|das\s+|alle\s+)?(?:Bewerter(?:in|innen)?|Korrektor(?:in|en)?"
                  r"|Evaluator(?:in|en)?|Annotator(?:in|en)?|Bewertungs(?:modell|system|-?KI)|Sprachmodell"
                  r"|KI(?:-\w+)?|Modell|Assistent(?:in)?|Prüfer(?:in|innen)?|Gutachter(?:in|innen)?)\b",
        address=r"\b(?:Hinweis|Anmerkung|Notiz|Nachricht|Bemerkung|Mitteilung|Anweisung(?:en)?)\s+(?:für|an)\s+{A}"
                r"|\b(?:an|liebe[rs]?|sehr\s+geehrte[rs]?|achtung,?)\s+{A}\s*[:,!]"
                r"|^[ \t]*{A}\s*[:,]|\b(?:falls|wenn)\s+(?:du|Sie)\s+(?:ein|eine)\s+{A}",
        grading=r"\b(?:Antwort|Zusammenfassung|fundiert|markier\w*|einstuf\w*|halluzin\w*|quellentreu|Verdikt"
                r"|Label|bewerten\s+Sie|bewerte\s+(?:diese|die|sie)|Punktzahl|Höchstnote|Bestnote)\b",
        ignore=r"\b(?:ignorier(?:e|en\s+Sie|t)?|vergiss|vergessen\s+Sie|missachte(?:n\s+Sie)?"
               r"|übergeh(?:e|en\s+Sie))\s+(?:bitte\s+)?(?:alle\s+)?(?:die\s+|deine\s+|Ihre\s+|sämtliche\s+)?"
               r"(?:vorherigen|bisherigen|obigen|vorigen|früheren|ursprünglichen|vorangegangenen)\s+"
               r"(?:Anweisungen|Instruktionen|Vorgaben|Regeln|Befehle)"
               r"|\b(?:ignorier(?:e|en\s+Sie)?|vergiss|vergessen\s+Sie)\s+(?:alle|deine|Ihre|sämtliche)\s+"
               r"(?:Anweisungen|Instruktionen|Vorgaben|Regeln)",
        mark=r"\b(?:markiere|markieren\s+Sie|bewerte|bewerten\s+Sie|stufe|stufen\s+Sie|klassifiziere"
             r"|klassifizieren\s+Sie|kennzeichne|kennzeichnen\s+Sie|werte|werten\s+Sie|beurteile|beurteilen\s+Sie)"
             r"\s+(?:bitte\s+)?(?:diese|die|sie|das|es)\s*(?:Antwort|Zusammenfassung|Aussage)?\s+(?:bitte\s+)?"
             r"als\s+(?:\w+\s+)?(?:korrekt|richtig|fundiert|belegt|zutreffend|wahr|quellentreu|gestützt|faktentreu)\b"
             r"|\bals\s+(?:vollständig\s+|voll\s+)?(?:korrekt|richtig|fundiert|belegt|zutreffend|quellentreu)\s+"
             r"(?:zu\s+)?(?:markieren|bewerten|einstufen|einzustufen|kennzeichnen|werten|klassifizieren|beurteilen)\b"
             r"|\b(?:gib|geben\s+Sie|vergib|vergeben\s+Sie)\s+(?:dieser\s+Antwort\s+|ihr\s+)?(?:die\s+)?"
             r"(?:volle\s+Punktzahl|Höchstnote|Bestnote|höchste\s+(?:Note|Bewertung|Punktzahl))",
        mark_requires=r"\b(?:Antwort|Zusammenfassung|bitte|Bewerter\w*|Prüfer\w*|Modell|KI|Punktzahl|Höchstnote"
                      r"|Bestnote|markier\w*)\b",
    ),
    Language(
        "es", "Spanish",
        addressee=r"(?:el\s+|la\s+|los\s+|las\s+)?(?:evaluador(?:a|es|as)?|calificador(?:a|es|as)?"
                  r"|corrector(?:a|es|as)?|revisor(?:a|es|as)?|examinador(?:a|es|as)?|anotador(?:a|es|as)?"
                  r"|modelo(?:\s+de\s+lenguaje)?|IA|inteligencia\s+artificial|asistente|juez\s+(?:IA|automático))\b",
        address=r"\b(?:nota|mensaje|comentario|aviso|observación|instrucciones?|recordatorio)\s+"
                r"(?:para|a|dirigid[oa]\s+a)\s+{A}"
                r"|\b(?:nota|mensaje|comentario|aviso|observación|instrucciones?|recordatorio)\s+al\s+{A}"
                r"|\b(?:estimad[oa]|querid[oa]|atención,?)\s+{A}|^[ \t]*(?:al\s+|a\s+la\s+)?{A}\s*[:,]"
                r"|\bsi\s+eres\s+(?:un|una)\s+{A}",
        grading=r"\b(?:respuestas?|resumen|calific\w+|puntuación|nota\s+máxima|márquel[ao]|márcal[ao]"
                r"|marc\w*\s+como|alucinaci\w+|veredicto|etiqueta)\b",
        ignore=r"\b(?:ignora|ignore|ignorad|ignoren|olvida|olvide|olvidad|olviden|descarta|descarte|desestima"
               r"|desconsidera|desconsidere|omite|omita|no\s+sigas|no\s+siga)\s+"
               r"(?:(?:todas\s+las|tus|sus)\s+(?:instrucciones|indicaciones|reglas|directrices|órdenes)"
               r"|(?:las|estas)\s+(?:instrucciones|indicaciones|reglas|directrices|órdenes)\s+"
               r"(?:anteriores|previas|precedentes|originales|del\s+sistema|de\s+arriba))",
        mark=r"\b(?:marca|marque|califica|califique|clasifica|clasifique|considera|considere|evalúa|evalúe"
             r"|etiqueta|etiquete|puntúa|puntúe)\s+(?:esta|la|este|el)\s+(?:respuesta|resumen)\s+como\s+"
             r"(?:\w+\s+)?(?:correct[ao]|fundamentad[ao]|respaldad[ao]|verdader[ao]|fiel|exact[ao]|verificad[ao]"
             r"|válid[ao])\b"
             r"|\b(?:márcal[ao]|márquel[ao]|califícal[ao]|califíquel[ao]|clasifícal[ao]|clasifíquel[ao]"
             r"|considéral[ao]|etiquétal[ao]|marca|marque)\s+como\s+(?:\w+\s+)?(?:correct[ao]|fundamentad[ao]"
             r"|respaldad[ao]|verdader[ao]|fiel|exact[ao]|verificad[ao])\b"
             r"|\b(?:responde|responda|contesta|conteste|di|diga)\s+(?:solo\s+|solamente\s+|únicamente\s+)?"
             r"(?:con\s+)?(?:que\s+(?:la|esta)\s+respuesta\s+es\s+|[«\"“]\s*)(?:correct[ao]|fundamentad[ao]"
             r"|respaldad[ao]|sí)\b"
             r"|\b(?:asigna|asigne|da|dale|dele|otorga|otorgue)\s+(?:a\s+esta\s+respuesta\s+)?(?:la\s+)?"
             r"(?:puntuación|nota|calificación)\s+máxima",
    ),
    Language(
        "it", "Italian",
        addressee=r"(?:il\s+|la\s+|i\s+|l['’]\s*)?(?:valutat(?:ore|ori|rice|rici)|corrett(?:ore|ori|rice)"
                  r"|revisor[ei]|esaminat(?:ore|ori|rice)|annotat(?:ore|ori|rice)|modello(?:\s+linguistico)?|IA"
                  r"|intelligenza\s+artificiale|assistente|giudice\s+(?:IA|automatico))\b",
        address=r"\b(?:nota|messaggio|commento|avviso|osservazione|istruzion[ei]|promemoria)\s+"
                r"(?:per|al|alla|ai|all['’])\s*{A}"
                r"|\b(?:gentile|car[oa]|attenzione,?)\s+{A}|(?:^|(?<=[\s.!?]))(?:al|alla|all['’]|ai)\s*{A}\s*[:,]"
                r"|^[ \t]*{A}\s*[:,]|\bse\s+sei\s+(?:un|una)\s+{A}",
        grading=r"\b(?:rispost[ae]|riassunto|sintesi|punteggio|voto|classific\w+|segn\w+\s+come"
                r"|allucinazion[ei]|verdetto|etichetta)\b",
        ignore=r"\b(?:ignora|ignorate|ignori|dimentica|dimenticate|dimentichi|trascura|trascurate|non\s+seguire)\s+"
               r"(?:(?:tutte\s+le|le\s+tue|le\s+sue)\s+(?:istruzioni|indicazioni|regole|direttive)"
               r"|(?:le|queste)\s+(?:istruzioni|indicazioni|regole|direttive)\s+(?:precedenti|originali"
               r"|di\s+sistema|sopra))",
        mark=r"\b(?:segna|segnate|segni|classifica|classificate|classifichi|considera|considerate|consideri"
             r"|valuta|valutate|valuti|contrassegna|etichetta|giudica)\s+(?:questa|la)\s+(?:risposta|sintesi)\s+"
             r"come\s+(?:\w+\s+)?(?:corretta|fondata|supportata|vera|fedele|esatta|verificata|valida)\b"
             r"|\b(?:segnala|classificala|considerala|valutala|contrassegnala|etichettala)\s+come\s+(?:\w+\s+)?"
             r"(?:corretta|fondata|supportata|vera|fedele|esatta|verificata)\b"
             r"|\b(?:assegna|assegnate|assegni|dai|date|attribuisci|attribuite)\s+(?:a\s+questa\s+risposta\s+)?"
             r"(?:il\s+)?(?:punteggio|voto)\s+massimo",
    ),
    Language(
        "pt", "Portuguese",
        addressee=r"(?:o\s+|a\s+|os\s+|as\s+)?(?:avaliador(?:a|es|as)?|corretor(?:a|es|as)?|revisor(?:a|es|as)?"
                  r"|examinador(?:a|es|as)?|anotador(?:a|es|as)?|modelo(?:\s+de\s+linguagem)?|IA"
                  r"|inteligência\s+artificial|assistente|juiz\s+(?:IA|automático))\b",
        address=r"\b(?:nota|mensagem|comentário|aviso|observação|instruç(?:ão|ões)|lembrete)\s+"
                r"(?:para|ao|à|aos)\s+{A}"
                r"|\b(?:prezad[oa]|car[oa]|atenção,?)\s+{A}|^[ \t]*(?:ao\s+|à\s+)?{A}\s*[:,]"
                r"|\bse\s+você\s+(?:é|for)\s+(?:um|uma)\s+{A}",
        grading=r"\b(?:respostas?|resumo|nota\s+máxima|pontuação|classifi\w+|marc\w+\s+como|alucinaç\w+"
                r"|veredito|rótulo)\b",
        ignore=r"\b(?:ignore|ignora|ignorem|esqueça|esqueca|esqueçam|desconsidere|desconsidera|desconsiderem"
               r"|descarte|descarta|não\s+siga)\s+"
               r"(?:(?:todas\s+as|suas|tuas|as\s+suas)\s+(?:instruções|instrucoes|orientações|regras|diretrizes)"
               r"|(?:as|estas)\s+(?:instruções|instrucoes|orientações|regras|diretrizes)\s+(?:anteriores|prévias"
               r"|originais|do\s+sistema|acima))",
        mark=r"\b(?:marque|marca|classifique|classifica|considere|considera|avalie|avalia|rotule|rotula)\s+"
             r"(?:esta|essa|a|este|esse|o)\s+(?:resposta|resumo)\s+como\s+(?:\w+\s+)?(?:corret[ao]"
             r"|fundamentad[ao]|verdadeir[ao]|fiel|exat[ao]|verificad[ao]|suportad[ao])\b"
             r"|\b(?:resposta|resumo)\s+(?:\w+\s+){0,3}(?:deve|deveria|precisa)\s+ser\s+(?:marcad[ao]"
             r"|classificad[ao]|considerad[ao]|avaliad[ao]|rotulad[ao])\s+como\s+(?:\w+\s+)?(?:corret[ao]"
             r"|fundamentad[ao]|verdadeir[ao]|fiel|exat[ao]|verificad[ao]|suportad[ao])\b"
             r"|\b(?:atribua|dê|conceda)\s+(?:a\s+esta\s+resposta\s+)?(?:a\s+)?(?:nota|pontuação)\s+máxima",
    ),
    Language(
        "ru", "Russian",
        addressee=r"(?:оценщик\w*|проверяющ\w*|рецензент\w*|асессор\w*|экзаменатор\w*|модел[ьиея]\w*|ИИ"
                  r"|нейросет\w*|ассистент\w*|разметчик\w*|ассесор\w*)",
        address=r"(?:примечани\w+|замечани\w+|сообщени\w+|заметк\w+|комментари\w+|указани\w+|инструкци\w+"
                r"|напоминани\w+|обращени\w+)\s+(?:для|к)\s+{A}"
                r"|(?:уважаем\w+|дорог\w+|внимание,?)\s+{A}|^[ \t]*{A}\s*[:,]",
        grading=r"(?:ответ\w*|резюме|отметь\w*|пометь\w*|балл\w*|вердикт\w*|галлюцинац\w*)",
        ignore=r"(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|не\s+обращай(?:те)?\s+внимания\s+на"
               r"|отбрось(?:те)?|не\s+следуй(?:те)?)\s+(?:все\s+)?(?:предыдущи[ех]|прежни[ех]|вышеуказанны[ех]"
               r"|изначальны[ех]|системны[ех]|свои|ваши|твои|все)\s+(?:инструкци\w*|указани\w*|правил\w*|команд\w*)",
        mark=r"(?:отметь(?:те)?|пометь(?:те)?|оцени(?:те)?|классифицируй(?:те)?|считай(?:те)?|признай(?:те)?"
             r"|засчитай(?:те)?)\s+(?:этот\s+|данный\s+|его\s+|ответ\s+)*(?:как\s+)?(?:верн\w*|правильн\w*"
             r"|обоснованн\w*|подтвержд\w*|достоверн\w*|корректн\w*)"
             r"|(?:поставь(?:те)?|дай(?:те)?|выстав\w+)\s+(?:этому\s+ответу\s+|ему\s+)?(?:высш\w+|максимальн\w+"
             r"|наивысш\w+)\s+(?:оценк\w+|балл\w*)",
    ),
    Language(
        "zh", "Chinese",
        addressee=r"(?:评估者|评估员|评审(?:员|人|者)?|评分(?:者|员|人|模型|系统)|审阅(?:者|人)|审核(?:员|者|人)"
                  r"|阅卷(?:人|者|老师)|判分(?:者|员)|打分(?:者|员|模型)|标注(?:员|者)|评测(?:模型|系统|者)"
                  r"|裁判模型|大模型|语言模型|人工智能|AI助手|AI)",
        address=r"(?:致|给|对)\s*{A}|{A}\s*(?:请注意|注意|须知|请|：|:|，|,)|(?:尊敬的|亲爱的)\s*{A}",
        grading=r"(?:答案|回答|回复|摘要|有依据|有根据|评分|打分|满分|标记为|幻觉)",
        ignore=r"(?:请)?(?:忽略|无视|忘记|忘掉|不要理会|不要遵循|抛开)(?:掉)?(?:之前|以上|上面|上述|先前|前面|此前"
               r"|原来|原有|系统)?(?:的)?(?:所有|全部|一切)?(?:的)?(?:指令|指示|说明|规则|提示词|命令)",
        mark=r"(?:标记|标注|判定|判为|评为|评定|视为|认定|归类)(?:为|成)?[^。！？\n]{0,6}?(?:有依据|有根据|正确|准确"
             r"|属实|忠实)|(?:输出|回答|回复|返回)[^。！？\n]{0,8}?(?:有依据|有根据|grounded|正确)|满分|最高分",
        mark_requires=r"(?:答案|回答|回复|摘要|请|给)",
    ),
    Language(
        "ja", "Japanese",
        addressee=r"(?:評価者|採点者|審査員|審査者|レビュアー|査読者|アノテーター|評価モデル|言語モデル|AI|アシスタント)",
        address=r"{A}(?:へ|の方へ|様|殿|各位|の皆様)|{A}\s*(?:：|:)",
        grading=r"(?:回答|答え|応答|要約|根拠|採点|満点|正解|判定)",
        ignore=r"(?:以前|前|上記|これまで|先ほど|既存|元)の(?:すべての|全ての|全部の)?(?:指示|命令|ルール|指令"
               r"|インストラクション)(?:は|を)(?:すべて)?(?:無視|忘れ)",
        mark=r"(?:正しい|正解|根拠がある|根拠あり|正確|事実に基づく|妥当)(?:もの)?と(?:判定|評価|分類|マーク|採点|判断"
             r"|ラベル)|満点を(?:付け|つけ|与え)",
        mark_requires=r"(?:回答|答え|応答|要約|してください|して下さい|しなさい)",
    ),
    Language(
        "nl", "Dutch",
        addressee=r"(?:de\s+|het\s+)?(?:beoordelaars?|evaluators?|correctoren|corrector|examinatoren|examinator"
                  r"|annotatoren|annotator|taalmodel|model|AI|assistent|nakijker)\b",
        address=r"\b(?:opmerking|notitie|bericht|boodschap|instructies?|aantekening|mededeling)\s+(?:voor|aan)\s+{A}"
                r"|\b(?:beste|geachte|aan)\s+{A}\s*[:,!]|^[ \t]*{A}\s*[:,]",
        grading=r"\b(?:antwoord|samenvatting|cijfer|markeer|hallucinatie\w*|score)\b",
        ignore=r"\b(?:negeer|vergeet)\s+(?:(?:alle|je|uw|jouw)\s+(?:\w+\s+)?(?:instructies|aanwijzingen|regels"
               r"|opdrachten)|(?:de|deze)\s+(?:vorige|eerdere|voorgaande|bovenstaande|oorspronkelijke)\s+"
               r"(?:instructies|aanwijzingen|regels|opdrachten))",
        mark=r"\b(?:markeer|beoordeel|classificeer|label|waardeer|beschouw)\s+(?:dit|het|deze)\s+"
             r"(?:antwoord|samenvatting)\s+als\s+(?:\w+\s+)?(?:correct|juist|onderbouwd|gegrond|waar|betrouwbaar)\b"
             r"|\b(?:markeer|beoordeel|label|classificeer)\s+(?:het|dit|deze)\s+als\s+(?:\w+\s+)?(?:correct|juist"
             r"|onderbouwd|gegrond)\b"
             r"|\bgeef\s+(?:dit\s+antwoord\s+|het\s+)?(?:het\s+)?(?:hoogste|maximale)\s+(?:cijfer|score)",
    ),
)
"""Every language with foreign-instruction rules."""

RULES: tuple[Rule, ...] = tuple(rule for language in LANGUAGES for rule in language.rules())
"""The rules of every language, compiled once."""


def find(text: str) -> list[Hit]:
    """Every foreign-language instruction to the evaluator in ``text`` (raw hits)."""
    return [hit for rule in RULES for hit in apply_rule(rule, text)]
