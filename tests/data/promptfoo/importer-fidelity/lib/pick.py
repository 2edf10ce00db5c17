def get_transform(output, context):
    return output
