# The code the proposer improves: lower is better.
def score():
    return 10.0
