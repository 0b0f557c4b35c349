"""Human labels where they matter: which answers to label and in what order (``queue``), the labels file
(``store``), and what the labels so far prove about each judge and each pair of judges (``estimates``)."""
