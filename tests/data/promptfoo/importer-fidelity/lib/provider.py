def call_api(prompt, options, context):
    return {"output": prompt}
