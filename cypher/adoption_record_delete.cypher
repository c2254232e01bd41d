// adoption_record_delete — forget the adoption record (`guidedrag kb adopt --drop`).
MATCH (a:__GuidedRAGAdoption) DELETE a
