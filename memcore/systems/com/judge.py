"""CoM's own LoCoMo judge wording (CoM App. A.1; answers CORRECT / INCORRECT): the judge prompt style "com".

CoMSystem.judge_styles declares it; the evaluation's judge prompts (memcore.eval.judge_prompts) find every
style a system's class brings through the systems registry, so `judge_prompt(..., style="com")` uses this
text for LoCoMo categories 1-4 and results name it "locomo-com".
"""

from __future__ import annotations

COM_LOCOMO_JUDGE_PROMPT = """You are an expert judge evaluating whether a model's prediction correctly answers a question compared to the reference answer.
Question: {question}
Reference Answer: {gold}
Model Prediction: {prediction}
Your task is to determine if the model's prediction is semantically equivalent to the reference answer. Consider the following:
1. The prediction may be phrased differently but convey the same meaning.
2. Minor differences in wording are acceptable if the core information matches.
3. For dates, consider different formats as equivalent (e.g., "7 May 2023" vs "May 7, 2023").
4. For numbers, consider "2022" vs "Last year" as potentially equivalent depending on context.
5. For descriptive answers, check if the key information is present.
Respond with ONLY ONE WORD:
- "CORRECT" if the prediction matches the reference answer.
- "INCORRECT" if the prediction does not match the reference answer.
Your response:"""

# judge prompt style -> (the prompt's name in results, its template over {question}, {gold}, {prediction})
JUDGE_STYLES = {"com": ("locomo-com", COM_LOCOMO_JUDGE_PROMPT)}
