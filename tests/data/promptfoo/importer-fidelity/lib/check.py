def get_assert(output, context):
    return "tweet" in output.lower()
