"""The first-start flow: what the personas call the person, and which mind they run on (issue 32). Shown once
at first start (Skip counts as done) and again from Settings or File > First start…"""
